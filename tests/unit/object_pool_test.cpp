#include <doctest/doctest.h>

#include <set>
#include <vector>

#include "sim/core/object_pool.hpp"

namespace lockstep {
namespace {

struct Packet {
  std::int64_t sequence;
  int size;
};

TEST_CASE("released objects are reused, so a steady state allocates nothing") {
  ObjectPool<Packet, 64> pool;
  std::vector<Packet*> live;
  for (int i = 0; i < 100; ++i) live.push_back(pool.acquire(Packet{i, 1000}));
  CHECK(pool.in_use() == 100);
  const std::size_t capacity = pool.capacity();
  CHECK(capacity == 128);
  for (int round = 0; round < 1000; ++round) {
    Packet* p = live[static_cast<std::size_t>(round % 100)];
    pool.release(p);
    live[static_cast<std::size_t>(round % 100)] = pool.acquire(Packet{round, 64});
  }
  CHECK(pool.capacity() == capacity);
  CHECK(pool.in_use() == 100);
  for (Packet* p : live) pool.release(p);
  CHECK(pool.in_use() == 0);
}

TEST_CASE("live objects have distinct, stable addresses and keep their values") {
  ObjectPool<Packet, 4> pool;
  std::vector<Packet*> live;
  for (int i = 0; i < 10; ++i) live.push_back(pool.acquire(Packet{i, i * 10}));
  CHECK(std::set<Packet*>(live.begin(), live.end()).size() == 10);
  for (int i = 0; i < 10; ++i) CHECK(live[static_cast<std::size_t>(i)]->size == i * 10);
  for (Packet* p : live) pool.release(p);
}

}  // namespace
}  // namespace lockstep

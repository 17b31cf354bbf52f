#include <doctest/doctest.h>

#include <cstdint>
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

TEST_CASE("slabs of 2 MiB start on a huge-page boundary and keep every object") {
  struct alignas(64) Line {
    std::int64_t sequence;
  };
  constexpr std::size_t kPerSlab = 32768;  // 64 B each: one 2 MiB slab, as for packets
  constexpr std::uintptr_t kHugePage = std::uintptr_t{2} << 20;
  ObjectPool<Line, kPerSlab> pool;
  std::vector<Line*> live;
  for (std::size_t i = 0; i < kPerSlab + 100; ++i) {
    live.push_back(pool.acquire(Line{static_cast<std::int64_t>(i)}));
  }
  CHECK(pool.capacity() == 2 * kPerSlab);
  // A new slab is handed out front to back, so its first object is the slab's start.
  CHECK(reinterpret_cast<std::uintptr_t>(live.front()) % kHugePage == 0);
  CHECK(reinterpret_cast<std::uintptr_t>(live[kPerSlab]) % kHugePage == 0);
  std::size_t kept = 0;
  for (std::size_t i = 0; i < live.size(); ++i) {
    kept += live[i]->sequence == static_cast<std::int64_t>(i) ? 1 : 0;
  }
  CHECK(kept == live.size());
  for (Line* line : live) pool.release(line);
  CHECK(pool.in_use() == 0);
}

}  // namespace
}  // namespace lockstep

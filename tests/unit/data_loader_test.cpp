// DataLoader against hand-computed waits: a file system that keeps up hides every read after the
// first, one that does not makes each step wait the difference, prefetch 0 waits the whole read,
// the cache takes its share of the bytes off the file system, and readers contend.
#include "models/training/data_loader.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

namespace lockstep {
namespace {

constexpr std::int64_t kUs = 1'000'000;  // picoseconds

// A replica's training loop: each step wants its batch, computes for `step_time` once the batch
// is in memory, then begins the next step.
struct TrainingLoop {
  Simulator& sim;
  DataLoader& loader;
  std::int32_t replica;
  Duration step_time;
  std::int64_t steps;
  std::int64_t step = 0;
  std::vector<std::int64_t> waits{};  // picoseconds, per step

  void begin_step() {
    const Time wanted = sim.now();
    loader.want(replica, step, [this, wanted](Time ready) {
      CHECK(ready == sim.now());
      waits.push_back((ready - wanted).ps());
      sim.schedule_in<&TrainingLoop::end_step>(step_time, this);
    });
  }

  void end_step() {
    if (++step < steps) begin_step();
  }
};

// One batch of 1000 samples of 1000 B = 8e6 bits, read at 100 Gb/s in 80 us after a 10 us
// latency: R = 90 us.
constexpr std::int64_t kSamples = 1000;
constexpr std::int64_t kReadPs = 90 * kUs;
const StorageSpec kFileSystem{
    .aggregate = BitRate::gbps(400), .per_node = BitRate::gbps(100), .latency = Duration::us(10)};

std::vector<std::int64_t> waits_of_one_replica(Duration step_time, std::int32_t prefetch,
                                               std::int64_t steps, Bytes* file_system_bytes) {
  Simulator sim;
  SharedStorage storage(sim, kFileSystem, 1);
  DataLoader loader(sim, storage,
                    DataLoading{.bytes_per_sample = Bytes(1000), .prefetch = prefetch}, {0},
                    kSamples, steps);
  TrainingLoop loop{sim, loader, 0, step_time, steps};
  loader.start();
  loop.begin_step();
  (void)sim.run();
  *file_system_bytes = storage.bytes_moved();
  return loop.waits;
}

TEST_CASE("a file system that keeps up with prefetch 2 leaves only the first step waiting") {
  Bytes moved;
  const auto waits = waits_of_one_replica(Duration::us(100), 2, 6, &moved);
  CHECK(waits == std::vector<std::int64_t>{kReadPs, 0, 0, 0, 0, 0});
  CHECK(moved == Bytes(6 * kSamples * 1000));  // nothing read beyond the last step
}

TEST_CASE("a file system slower than the step makes every step wait the difference") {
  // R = 90 us > T = 60 us: the reader is never idle, a batch arrives every R, a step every R.
  Bytes moved;
  const auto waits = waits_of_one_replica(Duration::us(60), 2, 6, &moved);
  CHECK(waits ==
        std::vector<std::int64_t>{kReadPs, 30 * kUs, 30 * kUs, 30 * kUs, 30 * kUs, 30 * kUs});
}

TEST_CASE("prefetch 0 reads on demand and waits the whole read every step") {
  Bytes moved;
  const auto waits = waits_of_one_replica(Duration::us(100), 0, 4, &moved);
  CHECK(waits == std::vector<std::int64_t>(4, kReadPs));
  CHECK(moved == Bytes(4 * kSamples * 1000));
}

TEST_CASE("the reader runs ahead of the step being computed by exactly `prefetch` batches") {
  // Step 0 computes from 90 us to 1090 us. Consuming batch 0 at 90 us lets batches 1 .. prefetch
  // be read, one after another, each in 90 us; by 800 us those are in and the reader is idle.
  for (const std::int32_t prefetch : {1, 2, 3}) {
    Simulator sim;
    SharedStorage storage(sim, kFileSystem, 1);
    DataLoader loader(sim, storage,
                      DataLoading{.bytes_per_sample = Bytes(1000), .prefetch = prefetch}, {0},
                      kSamples, 10);
    TrainingLoop loop{sim, loader, 0, Duration::us(1000), 10};
    loader.start();
    loop.begin_step();
    REQUIRE(sim.run(Time::zero() + Duration::us(800)) == RunOutcome::kReachedLimit);
    CHECK(storage.bytes_moved() == Bytes((1 + prefetch) * kSamples * 1000));
    CHECK(storage.active() == 0);
  }
}

TEST_CASE("a fully cached batch is read from the node's NVMe and takes no file-system bytes") {
  Simulator sim;
  SharedStorage storage(sim, kFileSystem, 1);
  // 8e6 bits at 50 Gb/s: 160 us, and no file-system latency.
  DataLoader loader(sim, storage,
                    DataLoading{.bytes_per_sample = Bytes(1000),
                                .cache_hit = 1.0,
                                .cache_rate = BitRate::gbps(50),
                                .prefetch = 0},
                    {0}, kSamples, 3);
  TrainingLoop loop{sim, loader, 0, Duration::us(10), 3};
  loader.start();
  loop.begin_step();
  (void)sim.run();
  CHECK(loop.waits == std::vector<std::int64_t>(3, 160 * kUs));
  CHECK(storage.bytes_moved() == Bytes(0));
}

TEST_CASE("a partly cached batch is ready when both of its parts are in") {
  // Half of 1 MB from the NVMe at 20 Gb/s: 200 us; half from the file system at 100 Gb/s after
  // 10 us: 50 us. The NVMe part decides.
  Simulator sim;
  SharedStorage storage(sim, kFileSystem, 1);
  DataLoader loader(sim, storage,
                    DataLoading{.bytes_per_sample = Bytes(1000),
                                .cache_hit = 0.5,
                                .cache_rate = BitRate::gbps(20),
                                .prefetch = 0},
                    {0}, kSamples, 2);
  TrainingLoop loop{sim, loader, 0, Duration::us(10), 2};
  loader.start();
  loop.begin_step();
  (void)sim.run();
  CHECK(loop.waits == std::vector<std::int64_t>(2, 200 * kUs));
  CHECK(storage.bytes_moved() == Bytes(2 * 500'000));
}

TEST_CASE("replicas reading at once share the file system's aggregate") {
  // Eight readers on eight nodes, aggregate 400 Gb/s: 50 Gb/s each, below the node limit, so a
  // batch takes 10 us + 160 us.
  Simulator sim;
  SharedStorage storage(sim,
                        StorageSpec{.aggregate = BitRate::gbps(400),
                                    .per_node = BitRate::gbps(100),
                                    .latency = Duration::us(10)},
                        8);
  DataLoader loader(sim, storage, DataLoading{.bytes_per_sample = Bytes(1000), .prefetch = 0},
                    {0, 1, 2, 3, 4, 5, 6, 7}, kSamples, 2);
  std::vector<TrainingLoop> loops;
  loops.reserve(8);
  for (std::int32_t replica = 0; replica < 8; ++replica) {
    loops.push_back(TrainingLoop{sim, loader, replica, Duration::us(10), 2});
  }
  loader.start();
  for (TrainingLoop& loop : loops) loop.begin_step();
  (void)sim.run();
  for (const TrainingLoop& loop : loops) {
    CHECK(loop.waits == std::vector<std::int64_t>(2, 170 * kUs));
  }
  CHECK(storage.bytes_moved() == Bytes(8 * 2 * kSamples * 1000));
}

TEST_CASE("wanting a batch before the start or out of step order is an invariant violation") {
  Simulator sim;
  SharedStorage storage(sim, kFileSystem, 1);
  DataLoader loader(sim, storage, DataLoading{.bytes_per_sample = Bytes(1000)}, {0}, kSamples, 4);
  CHECK_THROWS_AS(loader.want(0, 0, [](Time) {}), InvariantViolation);
  loader.start();
  CHECK_THROWS_AS(loader.want(0, 1, [](Time) {}), InvariantViolation);
}

}  // namespace
}  // namespace lockstep

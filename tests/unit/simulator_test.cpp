#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "sim/core/simulator.hpp"

namespace lockstep {
namespace {

struct Recorder {
  Simulator& sim;
  std::vector<std::pair<std::int64_t, std::int64_t>> seen;  // (time ps, argument)

  void tick() { seen.emplace_back(sim.now().ps(), -1); }
  void with_value(std::int64_t v) { seen.emplace_back(sim.now().ps(), v); }
  void with_pointer(std::int64_t* p) { seen.emplace_back(sim.now().ps(), *p); }
  void chain(std::int64_t remaining) {
    seen.emplace_back(sim.now().ps(), remaining);
    if (remaining > 0) sim.schedule_in<&Recorder::chain>(Duration::ns(1), this, remaining - 1);
  }
  void stop_here() {
    seen.emplace_back(sim.now().ps(), 99);
    sim.stop();
  }
  void schedule_in_past() { sim.schedule<&Recorder::tick>(Time::from_ps(1), this); }
};

TEST_CASE("member functions run at their time with their argument") {
  Simulator sim;
  Recorder r{sim, {}};
  std::int64_t payload = 42;
  sim.schedule<&Recorder::with_value>(Time::from_ps(30), &r, 7);
  sim.schedule<&Recorder::tick>(Time::from_ps(10), &r);
  sim.schedule<&Recorder::with_pointer>(Time::from_ps(20), &r, &payload);
  CHECK(sim.run() == RunOutcome::kDrained);
  CHECK(r.seen == std::vector<std::pair<std::int64_t, std::int64_t>>{{10, -1}, {20, 42}, {30, 7}});
  CHECK(sim.events_processed() == 3);
  CHECK(sim.now().ps() == 30);
}

TEST_CASE("a run with a limit stops before later events and can be resumed") {
  Simulator sim;
  Recorder r{sim, {}};
  sim.schedule<&Recorder::chain>(Time::zero(), &r, 5);  // events at 0, 1, 2, 3, 4, 5 ns
  CHECK(sim.run(Time::from_ps(2'500)) == RunOutcome::kReachedLimit);
  CHECK(r.seen.size() == 3);
  CHECK(sim.now().ps() == 2'500);
  CHECK(sim.pending() == 1);
  CHECK(sim.run() == RunOutcome::kDrained);
  CHECK(r.seen.size() == 6);
  CHECK(sim.now().ps() == 5'000);
}

// The pending event lies far beyond the limit; what is scheduled between the limit and it, once the
// run has stopped at the limit, must still come first.
TEST_CASE("events scheduled after a run stopped at its limit keep their order") {
  Simulator sim;
  Recorder r{sim, {}};
  sim.schedule<&Recorder::with_value>(Time::from_ps(1'000'000), &r, 3);
  CHECK(sim.run(Time::from_ps(1'000)) == RunOutcome::kReachedLimit);
  sim.schedule<&Recorder::with_value>(Time::from_ps(1'000), &r, 1);
  sim.schedule<&Recorder::with_value>(Time::from_ps(2'000), &r, 2);
  CHECK(sim.run() == RunOutcome::kDrained);
  CHECK(r.seen ==
        std::vector<std::pair<std::int64_t, std::int64_t>>{{1'000, 1}, {2'000, 2}, {1'000'000, 3}});
}

TEST_CASE("events exactly at the limit still run") {
  Simulator sim;
  Recorder r{sim, {}};
  sim.schedule<&Recorder::tick>(Time::from_ps(100), &r);
  CHECK(sim.run(Time::from_ps(100)) == RunOutcome::kDrained);
  CHECK(r.seen.size() == 1);
}

TEST_CASE("stop returns after the current event and leaves the rest pending") {
  Simulator sim;
  Recorder r{sim, {}};
  sim.schedule<&Recorder::tick>(Time::from_ps(1), &r);
  sim.schedule<&Recorder::stop_here>(Time::from_ps(2), &r);
  sim.schedule<&Recorder::tick>(Time::from_ps(3), &r);
  CHECK(sim.run() == RunOutcome::kStopped);
  CHECK(r.seen.size() == 2);
  CHECK(sim.pending() == 1);
}

TEST_CASE("scheduling into the past is an invariant violation naming the time") {
  Simulator sim;
  Recorder r{sim, {}};
  sim.schedule<&Recorder::schedule_in_past>(Time::from_ps(5'000), &r);
  try {
    (void)sim.run();
    FAIL("expected an invariant violation");
  } catch (const InvariantViolation& e) {
    CHECK(e.at().ps() == 5'000);
    CHECK(std::string(e.what()) ==
          "invariant violated at t=5ns in simulator: event scheduled in the past");
  }
}

TEST_CASE("a run limit before the clock is an invariant violation, since time cannot go back") {
  Simulator sim;
  Recorder r{sim, {}};
  sim.schedule<&Recorder::tick>(Time::from_ps(5'000), &r);
  CHECK(sim.run() == RunOutcome::kDrained);
  try {
    (void)sim.run(Time::from_ps(1'000));
    FAIL("expected an invariant violation");
  } catch (const InvariantViolation& e) {
    CHECK(e.at().ps() == 5'000);
    CHECK(std::string(e.what()) ==
          "invariant violated at t=5ns in simulator: run limit lies before the clock");
  }
}

struct CountingMonitor final : RunMonitor {
  int calls = 0;
  int stop_after = -1;
  void on_progress(Simulator& sim) override {
    if (++calls == stop_after) sim.stop();
  }
};

TEST_CASE("the monitor is called every period and can stop the run") {
  Simulator sim;
  Recorder r{sim, {}};
  CountingMonitor monitor;
  sim.set_monitor(&monitor, 10);
  sim.schedule<&Recorder::chain>(Time::zero(), &r, 99);  // 100 events
  CHECK(sim.run() == RunOutcome::kDrained);
  CHECK(monitor.calls == 10);

  Simulator again;
  Recorder r2{again, {}};
  CountingMonitor stopper;
  stopper.stop_after = 3;
  again.set_monitor(&stopper, 10);
  again.schedule<&Recorder::chain>(Time::zero(), &r2, 99);
  CHECK(again.run() == RunOutcome::kStopped);
  CHECK(r2.seen.size() == 30);
}

// A periodic sampler alone would keep a run whose work can never finish going forever; once only
// observers are left, the run is over, at the last event that changed anything.
TEST_CASE("a run with only observers left is drained") {
  struct Sampler {
    Simulator& sim;
    int samples = 0;
    void sample() {
      ++samples;
      sim.schedule_in_phase<&Sampler::sample>(sim.now() + Duration::us(1), Phase::kObserve, this);
    }
  };
  struct Work {
    bool done = false;
    void finish() { done = true; }
  };
  Simulator sim;
  Sampler sampler{sim};
  Work work;
  sim.schedule_in_phase<&Sampler::sample>(Time::zero(), Phase::kObserve, &sampler);
  sim.schedule<&Work::finish>(Time::zero() + Duration::ps(4'500'000), &work);
  CHECK(sim.run() == RunOutcome::kDrained);
  CHECK(work.done);
  CHECK(sim.now() == Time::zero() + Duration::ps(4'500'000));
  CHECK(sampler.samples == 5);  // at 0, 1, 2, 3 and 4 us
  CHECK(sim.pending() == 1);    // the next sample, never run
}

}  // namespace
}  // namespace lockstep

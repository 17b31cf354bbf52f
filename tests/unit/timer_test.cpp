#include <doctest/doctest.h>

#include <vector>

#include "sim/core/timer.hpp"

namespace lockstep {
namespace {

struct Owner {
  explicit Owner(Simulator& s) : sim(s) {}
  Simulator& sim;
  Timer timeout = Timer::calling<&Owner::on_timeout>(sim, this);
  std::vector<std::int64_t> fired_at;

  void on_timeout() { fired_at.push_back(sim.now().ps()); }
};

// Helper events that act on the timer at given times.
struct Driver {
  Simulator& sim;
  Owner& owner;
  void cancel() { owner.timeout.cancel(); }
  void rearm_at(std::int64_t ps) { owner.timeout.arm_at(Time::from_ps(ps)); }
};

TEST_CASE("an armed timer fires once at its deadline") {
  Simulator sim;
  Owner owner{sim};
  owner.timeout.arm_at(Time::from_ps(100));
  CHECK(owner.timeout.armed());
  (void)sim.run();
  CHECK(owner.fired_at == std::vector<std::int64_t>{100});
  CHECK_FALSE(owner.timeout.armed());
}

TEST_CASE("a cancelled timer never fires") {
  Simulator sim;
  Owner owner{sim};
  Driver driver{sim, owner};
  owner.timeout.arm_at(Time::from_ps(100));
  sim.schedule<&Driver::cancel>(Time::from_ps(50), &driver);
  (void)sim.run();
  CHECK(owner.fired_at.empty());
}

TEST_CASE("pushing the deadline later fires only at the new deadline, without a new event") {
  Simulator sim;
  Owner owner{sim};
  Driver driver{sim, owner};
  owner.timeout.arm_at(Time::from_ps(100));
  sim.schedule<&Driver::rearm_at>(Time::from_ps(50), &driver, 300);
  CHECK(sim.pending() == 2);
  (void)sim.run(Time::from_ps(60));
  CHECK(sim.pending() == 1);  // the original event is reused
  (void)sim.run();
  CHECK(owner.fired_at == std::vector<std::int64_t>{300});
}

TEST_CASE("pulling the deadline earlier fires at the new deadline and the old event is ignored") {
  Simulator sim;
  Owner owner{sim};
  Driver driver{sim, owner};
  owner.timeout.arm_at(Time::from_ps(300));
  sim.schedule<&Driver::rearm_at>(Time::from_ps(50), &driver, 100);
  (void)sim.run();
  CHECK(owner.fired_at == std::vector<std::int64_t>{100});
}

TEST_CASE("a timer cancelled and re-armed fires at the re-armed deadline only") {
  Simulator sim;
  Owner owner{sim};
  Driver driver{sim, owner};
  owner.timeout.arm_at(Time::from_ps(100));
  sim.schedule<&Driver::cancel>(Time::from_ps(10), &driver);
  sim.schedule<&Driver::rearm_at>(Time::from_ps(20), &driver, 250);
  (void)sim.run();
  CHECK(owner.fired_at == std::vector<std::int64_t>{250});
}

struct Many {
  explicit Many(Simulator& s) : sim(s) {}
  Simulator& sim;
  Timer first = Timer::calling<&Many::expired>(sim, this, 1);
  Timer second = Timer::calling<&Many::expired>(sim, this, 2);
  std::vector<std::uint64_t> which;
  void expired(std::uint64_t id) { which.push_back(id); }
};

TEST_CASE("timers of one owner tell it which one fired") {
  Simulator sim;
  Many owner(sim);
  owner.second.arm_at(Time::from_ps(10));
  owner.first.arm_at(Time::from_ps(20));
  (void)sim.run();
  CHECK(owner.which == std::vector<std::uint64_t>{2, 1});
}

}  // namespace
}  // namespace lockstep

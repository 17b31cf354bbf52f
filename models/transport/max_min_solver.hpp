// Max-min fair rates for flows over shared resources (link directions, and any host-side limit the
// caller models as a resource), kept up to date incrementally: after flows come and go or a
// capacity changes, solve() recomputes only the flows those changes can affect.
//
// Model: flow f uses resource r with weight w(f, r) > 0, so the constraint of r is
// sum_f w(f, r) * rate(f) <= capacity(r); a data flow uses its path's links with weight 1 and, for
// its acknowledgements, the reverse path with a small weight. A flow may also have a cap of its
// own. The allocation is the unique max-min fair one, computed by progressive filling: every flow's
// rate rises together, and a flow stops rising when a resource it uses saturates or it reaches its
// cap. Equivalently (and this is what the incremental update checks), every flow either sits at its
// cap or has a bottleneck: a saturated resource on which no flow gets more than it does.
//
// Incremental update: the flows on resources touched since the last solve() are re-filled with
// every other flow held at its rate (its use taken off the capacities). The result is then checked
// against the bottleneck condition on the resources the re-filled flows use: a held flow whose
// bottleneck there is no longer saturated, or now carries a faster flow, joins the re-filled set,
// and so does a held flow faster than a re-filled flow at that flow's bottleneck; then it is
// re-filled again. The set only grows, so this ends, and when the check passes the allocation is
// exactly the one a full recomputation gives. Its cost grows with the flows the change reaches,
// not with the total.
//
// Units: rates and capacities in bit/s as doubles, because max-min shares are fractions of link
// rates (a third of 100 Gb/s) that whole bit/s would round. Comparisons use a relative tolerance of
// 1e-9. Sources: Bertsekas and Gallager, Data Networks (2nd ed.), section 6.5.2 (max-min fairness,
// progressive filling, the bottleneck characterization).
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace lockstep {

class MaxMinSolver final {
 public:
  using ResourceId = std::int32_t;
  using FlowId = std::int32_t;  // reused after remove_flow

  struct Use {
    ResourceId resource = 0;
    double weight = 1.0;
  };

  static constexpr double kUncapped = std::numeric_limits<double>::infinity();

  // Returns the new resource's id (consecutive from 0). Throws std::invalid_argument for a
  // negative or non-finite capacity.
  ResourceId add_resource(double capacity_bps);
  void set_capacity(ResourceId resource, double capacity_bps);
  [[nodiscard]] double capacity(ResourceId resource) const;

  // The flow's rate is 0 until the next solve(). A resource may appear once per flow. Throws
  // std::invalid_argument for an unknown resource, a repeated one, a weight that is not positive
  // and finite, or a cap that is not positive.
  FlowId add_flow(std::span<const Use> uses, double cap_bps = kUncapped);
  void remove_flow(FlowId flow);
  void set_cap(FlowId flow, double cap_bps);

  // Recomputes the rates the changes since the last call can affect. Returns the flows whose rate
  // changed (added flows included), valid until the next call, in the order the re-filled set
  // grew: fixed by the calls made since the solver was built, so no sort is needed to make a run
  // repeat itself.
  std::span<const FlowId> solve();

  [[nodiscard]] double rate(FlowId flow) const { return standing_[index(flow)].rate; }
  [[nodiscard]] std::span<const Use> uses(FlowId flow) const { return flows_[index(flow)].uses; }
  // Sum of weight x rate over the resource's flows.
  [[nodiscard]] double load(ResourceId resource) const;
  [[nodiscard]] std::int32_t flow_count() const { return active_flows_; }

  // What the last solve() did: flows re-filled, and how often the check made the set grow.
  [[nodiscard]] std::int64_t last_flows_refilled() const { return last_refilled_; }
  [[nodiscard]] std::int64_t last_expansions() const { return last_expansions_; }

 private:
  static constexpr std::int32_t kNoBottleneck = -1;
  static constexpr std::int32_t kAtCap = -2;

  struct User {
    FlowId flow = 0;
    std::uint32_t use = 0;  // index into the flow's uses
    double weight = 1.0;    // a copy of the use's, read without touching the flow
  };
  struct Flow {
    std::vector<Use> uses;
    std::vector<std::uint32_t> slots;  // parallel to uses: position in the resource's users
    double cap = kUncapped;
    double new_rate = 0.0;
    bool frozen = false;
    bool alive = false;
  };
  // What a filling reads of every flow on its resources, held or not: kept apart from Flow and
  // dense, because those reads are scattered over all flows and dominate the cost.
  struct Standing {
    double rate = 0.0;
    std::uint64_t refill_mark = 0;            // == solve_epoch_: in the re-filled set
    std::int32_t bottleneck = kNoBottleneck;  // a resource id, or kAtCap
  };
  struct Resource {
    double capacity = 0.0;
    std::vector<User> users;
    // Scratch for one filling.
    std::uint64_t mark = 0;  // == fill_epoch_: among the re-filled set's resources
    double remaining = 0.0;  // capacity not taken by held or frozen flows
    double unfrozen_weight = 0.0;
    std::int32_t unfrozen = 0;
    bool dirty = false;
  };
  // A resource's entry holds the level it would saturate at when pushed. Freezing flows only
  // raises that level, so an entry is a lower bound: when popped it is re-pushed at its current
  // level if that is higher, instead of being pushed again on every freeze.
  struct HeapEntry {
    double level = 0.0;
    std::int32_t item = 0;  // a resource id, or -(flow + 1) for a flow's cap
  };

  [[nodiscard]] std::size_t index(FlowId flow) const { return static_cast<std::size_t>(flow); }
  [[nodiscard]] Resource& resource_at(ResourceId r) {
    return resources_[static_cast<std::size_t>(r)];
  }
  [[nodiscard]] bool refilling(FlowId flow) const {
    return standing_[index(flow)].refill_mark == solve_epoch_;
  }
  void mark_dirty(ResourceId resource);
  void add_to_refill(FlowId flow);
  void fill();
  // Fixes the flow's new rate; `bottleneck` is the resource that stopped it, or kAtCap.
  void freeze(FlowId flow, double level, std::int32_t bottleneck);
  [[nodiscard]] double saturation_level(const Resource& resource, double floor) const;
  void push(HeapEntry entry);
  [[nodiscard]] double current_rate(FlowId flow) const {
    const Standing& s = standing_[index(flow)];
    return s.refill_mark == solve_epoch_ ? flows_[index(flow)].new_rate : s.rate;
  }
  // Appends the held flows that break the bottleneck condition to refill_; true if any did.
  bool find_violations();

  std::vector<Resource> resources_;
  std::vector<Flow> flows_;
  std::vector<Standing> standing_;  // by flow
  std::vector<FlowId> free_flows_;
  std::int32_t active_flows_ = 0;
  std::vector<ResourceId> dirty_;
  std::vector<FlowId> capped_dirty_;  // flows whose cap changed

  // Scratch, reused across calls.
  std::uint64_t solve_epoch_ = 0;
  std::uint64_t fill_epoch_ = 0;
  std::vector<FlowId> refill_;
  std::vector<ResourceId> fill_resources_;
  std::vector<HeapEntry> heap_;
  std::vector<FlowId> changed_;
  std::vector<FlowId> violators_;
  std::int64_t last_refilled_ = 0;
  std::int64_t last_expansions_ = 0;
};

}  // namespace lockstep

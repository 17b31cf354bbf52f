#include "models/transport/max_min_solver.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace lockstep {
namespace {

constexpr double kRelativeTolerance = 1e-9;

// Min-heap on level; ties go to the lower item so that equal levels pop in a fixed order.
struct Later {
  template <class Entry>
  bool operator()(const Entry& x, const Entry& y) const {
    if (x.level != y.level) return x.level > y.level;
    return x.item > y.item;
  }
};

void check_capacity(double capacity_bps) {
  if (!std::isfinite(capacity_bps) || capacity_bps < 0.0) {
    throw std::invalid_argument("capacity must be finite and not negative, got " +
                                std::to_string(capacity_bps));
  }
}

void check_cap(double cap_bps) {
  if (!(cap_bps > 0.0)) {
    throw std::invalid_argument("a flow's cap must be positive, got " + std::to_string(cap_bps));
  }
}

}  // namespace

MaxMinSolver::ResourceId MaxMinSolver::add_resource(double capacity_bps) {
  check_capacity(capacity_bps);
  Resource& r = resources_.emplace_back();
  r.capacity = capacity_bps;
  return static_cast<ResourceId>(resources_.size() - 1);
}

void MaxMinSolver::set_capacity(ResourceId resource, double capacity_bps) {
  check_capacity(capacity_bps);
  Resource& r = resource_at(resource);
  if (r.capacity == capacity_bps) return;
  r.capacity = capacity_bps;
  mark_dirty(resource);
}

double MaxMinSolver::capacity(ResourceId resource) const {
  return resources_[static_cast<std::size_t>(resource)].capacity;
}

MaxMinSolver::FlowId MaxMinSolver::add_flow(std::span<const Use> uses, double cap_bps) {
  check_cap(cap_bps);
  if (uses.empty()) throw std::invalid_argument("a flow must use at least one resource");
  for (std::size_t i = 0; i < uses.size(); ++i) {
    const Use& use = uses[i];
    if (use.resource < 0 || static_cast<std::size_t>(use.resource) >= resources_.size()) {
      throw std::invalid_argument("unknown resource " + std::to_string(use.resource));
    }
    if (!std::isfinite(use.weight) || use.weight <= 0.0) {
      throw std::invalid_argument("a use's weight must be positive and finite");
    }
    // Paths are a dozen hops at most, so a quadratic scan beats any set.
    for (std::size_t j = 0; j < i; ++j) {
      if (uses[j].resource == use.resource) {
        throw std::invalid_argument("resource " + std::to_string(use.resource) +
                                    " appears twice in one flow");
      }
    }
  }
  FlowId id = 0;
  if (free_flows_.empty()) {
    id = static_cast<FlowId>(flows_.size());
    flows_.emplace_back();
    standing_.emplace_back();
  } else {
    id = free_flows_.back();
    free_flows_.pop_back();
  }
  Flow& flow = flows_[index(id)];
  flow.uses.assign(uses.begin(), uses.end());
  flow.slots.resize(uses.size());
  flow.cap = cap_bps;
  flow.new_rate = 0.0;
  flow.alive = true;
  Standing& standing = standing_[index(id)];
  standing.rate = 0.0;
  standing.bottleneck = kNoBottleneck;
  for (std::size_t i = 0; i < uses.size(); ++i) {
    Resource& r = resource_at(uses[i].resource);
    flow.slots[i] = static_cast<std::uint32_t>(r.users.size());
    r.users.push_back(User{id, static_cast<std::uint32_t>(i), uses[i].weight});
    mark_dirty(uses[i].resource);
  }
  ++active_flows_;
  return id;
}

void MaxMinSolver::remove_flow(FlowId id) {
  Flow& flow = flows_[index(id)];
  for (std::size_t i = 0; i < flow.uses.size(); ++i) {
    Resource& r = resource_at(flow.uses[i].resource);
    const std::uint32_t slot = flow.slots[i];
    const User moved = r.users.back();
    r.users[slot] = moved;
    flows_[index(moved.flow)].slots[moved.use] = slot;
    r.users.pop_back();
    mark_dirty(flow.uses[i].resource);
  }
  flow.uses.clear();
  flow.slots.clear();
  standing_[index(id)].rate = 0.0;
  flow.alive = false;
  free_flows_.push_back(id);
  --active_flows_;
}

void MaxMinSolver::set_cap(FlowId id, double cap_bps) {
  check_cap(cap_bps);
  flows_[index(id)].cap = cap_bps;
  capped_dirty_.push_back(id);
}

double MaxMinSolver::load(ResourceId resource) const {
  double sum = 0.0;
  for (const User& user : resources_[static_cast<std::size_t>(resource)].users) {
    sum += user.weight * standing_[index(user.flow)].rate;
  }
  return sum;
}

void MaxMinSolver::mark_dirty(ResourceId resource) {
  Resource& r = resource_at(resource);
  if (r.dirty) return;
  r.dirty = true;
  dirty_.push_back(resource);
}

void MaxMinSolver::add_to_refill(FlowId id) {
  Standing& standing = standing_[index(id)];
  if (standing.refill_mark == solve_epoch_) return;
  standing.refill_mark = solve_epoch_;
  refill_.push_back(id);
}

std::span<const MaxMinSolver::FlowId> MaxMinSolver::solve() {
  ++solve_epoch_;
  refill_.clear();
  changed_.clear();
  for (const ResourceId id : dirty_) {
    Resource& r = resource_at(id);
    r.dirty = false;
    for (const User& user : r.users) add_to_refill(user.flow);
  }
  for (const FlowId id : capped_dirty_) {
    if (flows_[index(id)].alive) add_to_refill(id);
  }
  dirty_.clear();
  capped_dirty_.clear();
  last_expansions_ = 0;
  last_refilled_ = static_cast<std::int64_t>(refill_.size());
  if (refill_.empty()) return {};
  while (true) {
    fill();
    if (!find_violations()) break;
    ++last_expansions_;
  }
  last_refilled_ = static_cast<std::int64_t>(refill_.size());
  for (const FlowId id : refill_) {
    Standing& standing = standing_[index(id)];
    if (flows_[index(id)].new_rate != standing.rate) {
      standing.rate = flows_[index(id)].new_rate;
      changed_.push_back(id);
    }
  }
  return changed_;
}

double MaxMinSolver::saturation_level(const Resource& r, double floor) const {
  return std::max(floor, std::max(0.0, r.remaining) / r.unfrozen_weight);
}

void MaxMinSolver::push(HeapEntry entry) {
  heap_.push_back(entry);
  std::push_heap(heap_.begin(), heap_.end(), Later{});
}

void MaxMinSolver::fill() {
  ++fill_epoch_;
  fill_resources_.clear();
  heap_.clear();
  for (const FlowId id : refill_) {
    Flow& flow = flows_[index(id)];
    flow.frozen = false;
    for (const Use& use : flow.uses) {
      Resource& r = resource_at(use.resource);
      if (r.mark != fill_epoch_) {
        r.mark = fill_epoch_;
        r.remaining = r.capacity;
        r.unfrozen_weight = 0.0;
        r.unfrozen = 0;
        fill_resources_.push_back(use.resource);
      }
      r.unfrozen_weight += use.weight;
      ++r.unfrozen;
    }
  }
  for (const ResourceId id : fill_resources_) {
    Resource& r = resource_at(id);
    for (const User& user : r.users) {
      const Standing& held = standing_[index(user.flow)];
      if (held.refill_mark != solve_epoch_) r.remaining -= user.weight * held.rate;
    }
    push(HeapEntry{saturation_level(r, 0.0), id});
  }
  for (const FlowId id : refill_) {
    const Flow& flow = flows_[index(id)];
    if (flow.cap != kUncapped) {
      push(HeapEntry{flow.cap, -(id + 1)});
    }
  }
  std::size_t unfrozen = refill_.size();
  while (unfrozen > 0 && !heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    const HeapEntry entry = heap_.back();
    heap_.pop_back();
    if (entry.item < 0) {
      const FlowId id = -entry.item - 1;
      if (flows_[index(id)].frozen) continue;
      freeze(id, entry.level, kAtCap);
      --unfrozen;
      continue;
    }
    Resource& r = resource_at(entry.item);
    if (r.unfrozen == 0) continue;
    const double level = saturation_level(r, entry.level);
    if (level > entry.level * (1.0 + kRelativeTolerance)) {
      push(HeapEntry{level, entry.item});
      continue;
    }
    for (std::size_t i = 0; i < r.users.size() && r.unfrozen > 0; ++i) {
      const FlowId id = r.users[i].flow;
      if (!refilling(id) || flows_[index(id)].frozen) continue;
      freeze(id, level, entry.item);
      --unfrozen;
    }
  }
}

void MaxMinSolver::freeze(FlowId id, double level, std::int32_t bottleneck) {
  Flow& flow = flows_[index(id)];
  flow.frozen = true;
  flow.new_rate = level;
  standing_[index(id)].bottleneck = bottleneck;
  for (const Use& use : flow.uses) {
    Resource& r = resource_at(use.resource);
    r.remaining -= use.weight * level;
    r.unfrozen_weight -= use.weight;
    --r.unfrozen;
  }
}

bool MaxMinSolver::find_violations() {
  violators_.clear();
  for (const ResourceId id : fill_resources_) {
    const Resource& r = resources_[static_cast<std::size_t>(id)];
    double load = 0.0;
    double fastest = 0.0;
    double refilled_bottleneck_level = std::numeric_limits<double>::infinity();
    for (const User& user : r.users) {
      const Standing& standing = standing_[index(user.flow)];
      const double rate = current_rate(user.flow);
      load += user.weight * rate;
      fastest = std::max(fastest, rate);
      if (standing.refill_mark == solve_epoch_ && standing.bottleneck == id) {
        refilled_bottleneck_level = std::min(refilled_bottleneck_level, rate);
      }
    }
    const bool saturated = load >= r.capacity - kRelativeTolerance * std::max(r.capacity, 1.0);
    for (const User& user : r.users) {
      const Standing& held = standing_[index(user.flow)];
      if (held.refill_mark == solve_epoch_) continue;
      const bool lost_bottleneck =
          held.bottleneck == id && (!saturated || held.rate < fastest * (1.0 - kRelativeTolerance));
      const bool outruns_refilled =
          held.rate > refilled_bottleneck_level * (1.0 + kRelativeTolerance);
      if (lost_bottleneck || outruns_refilled) violators_.push_back(user.flow);
    }
  }
  for (const FlowId id : violators_) add_to_refill(id);
  return !violators_.empty();
}

}  // namespace lockstep

// Progressive filling over a node limit per node and one aggregate, with exact integer progress;
// see shared_storage.hpp for the model and its sources.
#include "models/training/shared_storage.hpp"

#include <algorithm>
#include <utility>

#include "sim/core/check.hpp"

namespace lockstep {
namespace {

constexpr std::int64_t kPsPerSecond = 1'000'000'000'000;

}  // namespace

SharedStorage::SharedStorage(Simulator& sim, const StorageSpec& spec, std::int32_t nodes)
    : sim_(sim), spec_(spec), flowing_(static_cast<std::size_t>(nodes), 0) {
  LOCKSTEP_CHECK(nodes > 0, sim_.now(), "shared storage", "no node to serve");
  LOCKSTEP_CHECK(spec.aggregate.bps() > 0 && spec.per_node.bps() > 0, sim_.now(), "shared storage",
                 "a bandwidth of zero would never finish a transfer");
  LOCKSTEP_CHECK(spec.latency >= Duration(), sim_.now(), "shared storage", "negative latency");
}

void SharedStorage::transfer(std::int32_t node, Bytes size, Done done) {
  LOCKSTEP_CHECK(node >= 0 && node < nodes(), sim_.now(), "shared storage",
                 "transfer from a node the file system does not serve");
  LOCKSTEP_CHECK(size.count() >= 0, sim_.now(), "shared storage", "negative transfer size");
  const std::uint64_t id = next_id_++;
  transfers_.emplace(id, Transfer{.node = node, .size = size, .done = std::move(done)});
  ++active_;
  sim_.schedule_in<&SharedStorage::start_flowing>(spec_.latency, this, id);
}

void SharedStorage::start_flowing(std::uint64_t id) {
  const auto found = transfers_.find(id);
  Transfer& transfer = found->second;
  if (transfer.size.count() == 0) {
    Done done = std::move(transfer.done);
    transfers_.erase(found);
    --active_;
    done(sim_.now());
    return;
  }
  advance_to_now();
  transfer.flowing = true;
  transfer.remaining = static_cast<Wide>(transfer.size.bits()) * kPsPerSecond;
  ++flowing_[static_cast<std::size_t>(transfer.node)];
  share_bandwidth();
  arm_next_completion();
}

void SharedStorage::set_rates(BitRate aggregate, BitRate per_node) {
  LOCKSTEP_CHECK(aggregate.bps() > 0 && per_node.bps() > 0, sim_.now(), "shared storage",
                 "a file system rate must be positive");
  advance_to_now();
  spec_.aggregate = aggregate;
  spec_.per_node = per_node;
  share_bandwidth();
  arm_next_completion();
}

// Called when the earliest completion is due; every transfer whose last byte has moved by now ends
// here, in request order, after the survivors' shares are settled, so a callback that starts a new
// transfer sees a consistent state.
void SharedStorage::finish_due() {
  advance_to_now();
  std::vector<Done> finished;
  for (auto it = transfers_.begin(); it != transfers_.end();) {
    Transfer& transfer = it->second;
    if (!transfer.flowing || transfer.remaining != 0) {
      ++it;
      continue;
    }
    --flowing_[static_cast<std::size_t>(transfer.node)];
    --active_;
    bytes_moved_ += transfer.size;
    finished.push_back(std::move(transfer.done));
    it = transfers_.erase(it);
  }
  share_bandwidth();
  arm_next_completion();
  for (Done& done : finished) done(sim_.now());
}

void SharedStorage::advance_to_now() {
  const Time now = sim_.now();
  const auto elapsed_ps = static_cast<Wide>((now - advanced_at_).ps());
  advanced_at_ = now;
  if (elapsed_ps == 0) return;
  for (auto& [id, transfer] : transfers_) {
    if (!transfer.flowing) continue;
    const Wide moved = static_cast<Wide>(transfer.share.numerator_bps) * elapsed_ps /
                       static_cast<Wide>(transfer.share.denominator);
    transfer.remaining -= std::min(moved, transfer.remaining);
  }
}

void SharedStorage::share_bandwidth() {
  // A node's transfers reach the node limit when the common level reaches per_node / n, so the
  // nodes with most transfers are capped first; the level left for the rest is what the aggregate
  // has left over the transfers not yet capped.
  std::vector<std::int32_t> busy_nodes;
  std::int64_t uncapped_transfers = 0;
  for (std::size_t node = 0; node < flowing_.size(); ++node) {
    if (flowing_[node] == 0) continue;
    busy_nodes.push_back(static_cast<std::int32_t>(node));
    uncapped_transfers += flowing_[node];
  }
  std::stable_sort(busy_nodes.begin(), busy_nodes.end(), [this](std::int32_t a, std::int32_t b) {
    return flowing_[static_cast<std::size_t>(a)] > flowing_[static_cast<std::size_t>(b)];
  });

  std::vector<Share> node_share(flowing_.size());
  std::int64_t aggregate_left_bps = spec_.aggregate.bps();
  const std::int64_t per_node_bps = spec_.per_node.bps();
  std::size_t first_uncapped = 0;
  for (; first_uncapped < busy_nodes.size(); ++first_uncapped) {
    const auto node = static_cast<std::size_t>(busy_nodes[first_uncapped]);
    const std::int64_t on_node = flowing_[node];
    // per_node / on_node <= aggregate_left / uncapped_transfers, cross-multiplied.
    const bool node_limit_binds =
        static_cast<Wide>(per_node_bps) * static_cast<Wide>(uncapped_transfers) <=
        static_cast<Wide>(aggregate_left_bps) * static_cast<Wide>(on_node);
    if (!node_limit_binds) break;
    node_share[node] = Share{.numerator_bps = per_node_bps, .denominator = on_node};
    aggregate_left_bps -= per_node_bps;
    uncapped_transfers -= on_node;
  }
  for (std::size_t i = first_uncapped; i < busy_nodes.size(); ++i) {
    node_share[static_cast<std::size_t>(busy_nodes[i])] =
        Share{.numerator_bps = aggregate_left_bps, .denominator = uncapped_transfers};
  }
  for (auto& [id, transfer] : transfers_) {
    if (transfer.flowing) transfer.share = node_share[static_cast<std::size_t>(transfer.node)];
  }
}

void SharedStorage::arm_next_completion() {
  bool any = false;
  Wide soonest_ps = 0;
  for (const auto& [id, transfer] : transfers_) {
    if (!transfer.flowing) continue;
    const Wide numerator = transfer.remaining * static_cast<Wide>(transfer.share.denominator);
    const auto rate = static_cast<Wide>(transfer.share.numerator_bps);
    const Wide ps = (numerator + rate - 1) / rate;
    if (!any || ps < soonest_ps) soonest_ps = ps;
    any = true;
  }
  if (!any) {
    next_completion_.cancel();
    return;
  }
  next_completion_.arm_at(sim_.now() + Duration::ps_from_wide(soonest_ps));
}

}  // namespace lockstep

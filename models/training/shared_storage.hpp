// A parallel file system (Lustre, GPFS, a cloud file service) shared by the nodes of a training
// job: the data loaders read their batches from it and checkpoints are written to it, all at once,
// so one node's read slows when the others read too.
//
// Model: a request first waits the file system's latency (metadata lookup, open, the first round
// trip to the servers), then its bytes flow as a fluid at a rate set by max-min fairness over two
// kinds of limits: the servers' aggregate bandwidth, shared by every transfer in progress, and each
// node's client limit (its storage NIC, the client stack), shared by that node's transfers. The
// fair allocation is computed by progressive filling (Bertsekas and Gallager, Data Networks, 2nd
// ed., section 6.5.2): every transfer's rate rises together; the transfers of a node stop rising,
// all at once and at the same rate, when their node's limit is reached, and the others when the
// aggregate is. The transfers of the nodes with most transfers hit their node limit first, so the
// nodes are visited in that order and the whole allocation costs one sort. Rates are recomputed
// when a transfer starts flowing or ends.
//
// Reads and writes share one bandwidth: in a parallel file system both are served by the same
// object storage servers over the same network, and what a job sees as the bottleneck is that
// pool, not a direction. The simplification is that writes often run slower than reads (parity
// updates, journaling), which a scenario can reflect by giving the job's storage a lower aggregate.
//
// Exactness: each share is a fraction of whole bit/s (a node limit over its transfers, or what the
// aggregate leaves over the transfers it still limits), kept as an integer numerator and
// denominator. A transfer's remaining work is counted in bits times 10^12 as a 128-bit integer, so
// that t picoseconds at n/d bit/s move n t / d of those units: progress is rounded down at most one
// unit (10^-12 bit) per recomputation, which never makes the file system faster than its rates,
// and completion times are rounded up to the picosecond, as tx_time does (sim/core/bit_rate.hpp).
//
// Left out: striping over object storage targets and their individual limits (one hot target
// slows only the files on it), per-file locking and metadata contention beyond a fixed latency,
// client caches, and the storage traffic's use of the compute fabric (a dedicated storage network
// is assumed, as large clusters have). Units: Bytes, BitRate, Duration, Time.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "sim/core/bit_rate.hpp"
#include "sim/core/bytes.hpp"
#include "sim/core/simulator.hpp"
#include "sim/core/time.hpp"
#include "sim/core/timer.hpp"

namespace lockstep {

struct StorageSpec {
  BitRate aggregate;  // what the file system's servers deliver in total
  BitRate per_node;   // one node's client limit (its storage NIC, its client stack)
  Duration latency;   // per request, before data flows (metadata, open)
};

class SharedStorage {
 public:
  SharedStorage(Simulator& sim, const StorageSpec& spec, std::int32_t nodes);
  SharedStorage(const SharedStorage&) = delete;
  SharedStorage& operator=(const SharedStorage&) = delete;

  using Done = std::function<void(Time finished)>;

  // Starts moving `size` between `node` and the file system now; its bytes flow after the latency,
  // and `done` is called once, from an event, when the last byte has moved. A zero-byte transfer
  // ends after the latency.
  void transfer(std::int32_t node, Bytes size, Done done);

  // The servers' aggregate and each node's client limit change now (a degraded file system, and
  // its recovery); transfers in flight go on at their new shares.
  void set_rates(BitRate aggregate, BitRate per_node);
  [[nodiscard]] const StorageSpec& spec() const { return spec_; }

  [[nodiscard]] Bytes bytes_moved() const { return bytes_moved_; }  // by completed transfers
  [[nodiscard]] std::int32_t active() const { return active_; }     // requested and not yet done
  [[nodiscard]] std::int32_t nodes() const { return static_cast<std::int32_t>(flowing_.size()); }

 private:
  __extension__ using Wide = unsigned __int128;

  // numerator / denominator bit/s.
  struct Share {
    std::int64_t numerator_bps = 0;
    std::int64_t denominator = 1;
  };

  struct Transfer {
    std::int32_t node = 0;
    Bytes size{};
    bool flowing = false;  // false while it waits out the latency
    Wide remaining = 0;    // bits times 10^12
    Share share{};
    Done done{};
  };

  void start_flowing(std::uint64_t id);
  void finish_due();
  void advance_to_now();
  void share_bandwidth();
  void arm_next_completion();

  Simulator& sim_;
  StorageSpec spec_;
  std::map<std::uint64_t, Transfer> transfers_;  // by request order, which orders the callbacks
  std::vector<std::int32_t> flowing_;            // per node
  std::uint64_t next_id_ = 0;
  std::int32_t active_ = 0;
  Bytes bytes_moved_;
  Time advanced_at_;
  Timer next_completion_ = Timer::calling<&SharedStorage::finish_due>(sim_, this);
};

}  // namespace lockstep

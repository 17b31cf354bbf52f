// The pending-event set, ordered by (time, phase, insertion sequence): ties at one time run lowest
// phase first, then in the order they were scheduled, so a run never depends on container layout.
//
// It is a timing wheel (Varghese and Lauck, SOSP 1987) with exact order inside each slot. A packet
// fabric schedules almost every event less than a few microseconds ahead (a serialization time, a
// propagation delay), so time is cut into slots of 1.024 ns and a ring of 4096 slots covers the
// next 2.1 to 4.2 us (whole buckets of 2048 slots: the clock's and the next). An event in that
// horizon is appended, unsorted, to its slot; the earliest occupied slot is found with two bit
// scans and sorted when the clock reaches it. An event within the horizon is thus written into its
// slot once and then copied twice, within the cache, as its slot is sorted, where the radix heap
// this replaced moved each event 4-5 times. And because the slot in hand is sorted, the events due
// next are known several ahead: their targets and arguments (mostly packets) are fetched from
// memory while the earlier ones run, which at a thousand hosts, with tens of megabytes of packets
// in flight, is much of an event's cost. A few kinds of event may also get a second look a few
// events before they run (look_ahead_for), once their target and argument are in cache: a packet's
// arrival then fetches the state of the switch port and buffer it will reach, which it could not
// name before the packet was read. Measured on Perm-1024 and Perm-8192 (4000 B): 11-12% faster.
// Where that state is itself out of the cache (thousands of hosts), a third look, nearer to the
// event, goes one step further, and the chunks of the next slot are fetched while the slot in hand
// runs: Perm-8192 (1000 B) 1.5x faster in all (with the looks at a port's departures and a NIC's
// wake-ups they serve). Measured on Perm-1024 (1000 B): 28% faster than the radix heap; in the
// hold model (tests/bench/event_queue_bench) 1.2-1.6x faster at 10^3-10^4 pending and level with
// it at 10^6, before slots were sorted by one-word keys, which took 10^6 pending from 8.5 to 11-12
// M events/s. Slots are chunks from a pool and vectors keep their capacity, so once warmed up,
// pushing and popping allocate nothing.
//
// Events further ahead (a flow's end at flow level, timers, sampling) wait in a second, coarser
// wheel of 4096 such buckets, 8.6 ms, unsorted, each a list of the pool's chunks, and move to the
// ring's slots when it comes to reach their bucket; only those beyond that wait in a binary heap.
// On the 16 x 8 H100 nccl-tests sweep at flow level, whose events are mostly microseconds apart,
// the heap's sifting was an eighth of the run: with the far wheel the sweep runs in 0.87 of the
// time and the worked example's flow-level step in 0.82, packet runs level.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/check.hpp"
#include "sim/core/circular_bitset.hpp"
#include "sim/core/time.hpp"

namespace lockstep {

// Orders events that fall on the same picosecond: lower phases run first.
enum class Phase : std::uint8_t {
  kFirst = 0,
  // Ahead of the rest of an instant: a fabric's control frames arrive before the data that lands
  // with them, so a port chooses between them by priority even at a tie.
  kAhead = 64,
  kNormal = 128,
  // State derived from everything that happened at an instant (flow-level rates after all the
  // flows that start or end then), settled once before it is observed.
  kSettle = 192,
  // Observers (counter sampling) see the state after everything else at that instant. They change
  // nothing: a run with only observers left is over (Simulator::run).
  kObserve = 255,
};

using EventFn = void (*)(void* target, std::uint64_t arg);

struct Event {
  Time at;
  std::uint64_t order;  // the phase above the insertion sequence, in the low 54 bits
  EventFn fn;
  void* target;
  std::uint64_t arg;

  void fire() const { fn(target, arg); }
  [[nodiscard]] Phase phase() const { return static_cast<Phase>(order >> kSequenceBits); }
  [[nodiscard]] bool runs_before(const Event& other) const {
    return at < other.at || (at == other.at && order < other.order);
  }
  // 7 * 10^13 events: months of running at ten million a second.
  static constexpr int kSequenceBits = 46;
  static constexpr int kOrderBits = kSequenceBits + 8;
};

class EventQueue {
 public:
  // Events run by `fn` get a second look `kLookAhead` events before they run: `look(target, arg)`
  // may read what the first prefetch brought in (a packet, a link) and prefetch what the event will
  // reach through it. A third look, `last_look`, `kLastLook` events before they run, may go one
  // step further, through what the second fetched. At most kLookKinds kinds; asking again for a
  // kind replaces its looks.
  using LookAhead = void (*)(void* target, std::uint64_t arg);
  static constexpr std::size_t kLookKinds = 4;
  // How many events ahead of the one running to fetch: enough to hide a miss to memory behind the
  // events in between, which at thousands of hosts wait on misses of their own. Measured on
  // Perm-8192 (1000 B), farm-bench n=5: 12/8/4 ran in 0.96 of the time of 8/5/2, and 16/11/6 in
  // 0.97 of 12/8/4; Incast-128 and Perm-128 level.
  static constexpr std::size_t kPrefetchAhead = 16;
  // The second look: late enough that the first prefetch has landed, early enough for its own; the
  // third, as long again after the second.
  static constexpr std::size_t kLookAhead = 11;
  static constexpr std::size_t kLastLook = 6;
  void look_ahead_for(EventFn fn, LookAhead look, LookAhead last_look = nullptr) {
    auto* kind = std::find_if(looks_.begin(), looks_.begin() + look_kinds_,
                              [&](const Look& l) { return l.fn == fn; });
    if (kind == looks_.begin() + look_kinds_) {
      if (look_kinds_ == kLookKinds) {
        throw std::logic_error("the event queue looks ahead for at most " +
                               std::to_string(kLookKinds) + " kinds of event");
      }
      ++look_kinds_;
    }
    *kind = Look{fn, look, last_look};
    last_looks_ = std::any_of(looks_.begin(), looks_.begin() + look_kinds_,
                              [](const Look& l) { return l.last_look != nullptr; });
  }

  [[nodiscard]] bool empty() const { return size_ == 0; }
  [[nodiscard]] std::size_t size() const { return size_; }

  // `at` must not precede the time of the last event popped.
  void push(Time at, Phase phase, EventFn fn, void* target, std::uint64_t arg) {
    LOCKSTEP_CHECK(next_sequence_ < kSequenceEnd, at, "event queue",
                   "more events scheduled than the sequence numbers order");
    const std::uint64_t order =
        (static_cast<std::uint64_t>(phase) << Event::kSequenceBits) | next_sequence_++;
    const std::uint64_t slot = slot_of(at);
    assert(slot >= current_slot_);
    if (slot - current_slot_ - 1 < ring_end_slot() - current_slot_ - 1) [[likely]] {
      // Field by field into the slot: an event built aside and copied in wide moves would wait for
      // the narrow stores that built it to drain, behind any store still missing the cache.
      Event& e = append_in_ring(slot);
      e.at = at;
      e.order = order;
      e.fn = fn;
      e.target = target;
      e.arg = arg;
    } else {
      place_outside_ring(slot, Event{at, order, fn, target, arg});
    }
    ++size_;
  }

  // Removes the earliest event into `out`, unless it lies after `limit`; the queue must not be
  // empty and `limit` must not precede the last event popped. When nothing is left up to `limit`,
  // pushes from `limit` on become valid (the caller's clock moves to the limit).
  [[nodiscard]] bool pop_not_after(Time limit, Event& out) {
    if (current_slot_empty() && !advance(slot_of(limit))) return false;
    const bool from_late =
        !late_.empty() && (next_ == current_.size() || late_.front().runs_before(current_[next_]));
    const Event& earliest = from_late ? late_.front() : current_[next_];
    if (earliest.at > limit) return false;
    out = earliest;
    --size_;
    if (from_late) {
      std::pop_heap(late_.begin(), late_.end(), LaterFirst{});
      late_.pop_back();
      return true;
    }
    ++next_;
    // Read once: the looks are calls the compiler cannot see through.
    const Event* const following = current_.data() + next_;
    const std::size_t remaining = current_.size() - next_;
    if (remaining >= kLookAhead) {
      const Event& near = following[kLookAhead - 1];
      if (const Look* kind = look_of(near.fn); kind != nullptr) kind->look(near.target, near.arg);
    }
    if (last_looks_ && remaining >= kLastLook) {
      const Event& nearer = following[kLastLook - 1];
      if (const Look* kind = look_of(nearer.fn); kind != nullptr && kind->last_look != nullptr) {
        kind->last_look(nearer.target, nearer.arg);
      }
    }
    prefetch_next_slot_line();
    if (remaining >= kPrefetchAhead) {
      prefetch(following[kPrefetchAhead - 1]);
    } else if (next_slot_ == kUnknownSlot && occupied_.any()) {
      // The slot in hand runs out within the window: fetch for the events last added to the next
      // occupied slot (its first chunk), which is not sorted yet.
      next_slot_ = next_occupied_slot();
      const std::uint32_t chunk = ring_[next_slot_ % kSlots];
      for (std::uint32_t i = 0; i < links_[chunk].count; ++i) prefetch(chunks_[chunk][i]);
    }
    if (next_ >= kCompactAfter && 2 * next_ >= current_.size()) {
      // A long run of events scheduled into the slot in hand: drop the ones already taken.
      current_.erase(current_.begin(), current_.begin() + static_cast<std::ptrdiff_t>(next_));
      next_ = 0;
    }
    return true;
  }

  // Removes and returns the earliest event; the queue must not be empty.
  Event pop() {
    Event earliest{};
    [[maybe_unused]] const bool popped = pop_not_after(Time::max(), earliest);
    assert(popped);
    return earliest;
  }

 private:
  static constexpr int kSlotBits = 10;  // 1.024 ns
  static constexpr std::uint64_t kSlots = 4096;
  static_assert(std::has_single_bit(kSlots), "slot arithmetic wraps modulo 2^64");
  // The far wheel's buckets: half the ring each, so that the ring always holds the bucket of the
  // clock and the next one whole, and 4096 of them, 8.6 ms ahead.
  static constexpr std::uint64_t kBucketSlots = kSlots / 2;
  static constexpr std::uint64_t kBuckets = 4096;
  static constexpr std::size_t kCompactAfter = 4096;
  static constexpr std::uint64_t kSequenceEnd = std::uint64_t{1} << Event::kSequenceBits;
  static_assert(kSlotBits + Event::kOrderBits <= 64, "an event's place in its slot is one word");

  struct PlaceInSlot {
    std::uint64_t key;
    std::uint64_t position;  // chunk x kChunkEvents + place in the chunk
  };
  struct LaterFirst {  // makes std's max-heaps min-heaps
    bool operator()(const Event& a, const Event& b) const { return b.runs_before(a); }
  };

  [[nodiscard]] static std::uint64_t slot_of(Time at) {
    return static_cast<std::uint64_t>(at.ps()) >> kSlotBits;
  }

  // Its target and its argument, often a pointer too (a prefetch of a non-address is harmless).
  static void prefetch(const Event& e) {
    __builtin_prefetch(e.target);
    __builtin_prefetch(reinterpret_cast<const void*>(e.arg));
  }

  [[gnu::noinline]] void place_outside_ring(std::uint64_t slot, const Event& e) {
    if (slot == current_slot_) {
      insert_in_current(e);
      return;
    }
    const std::uint64_t bucket = slot / kBucketSlots;
    if (bucket - ring_end_slot() / kBucketSlots < kBuckets) {
      append_to(far_[bucket % kBuckets]) = e;
      far_occupied_.set(bucket % kBuckets);
    } else {
      beyond_.push_back(e);
      std::push_heap(beyond_.begin(), beyond_.end(), LaterFirst{});
    }
  }

  // Room for one more event in ring slot `slot`, which is marked occupied.
  Event& append_in_ring(std::uint64_t slot) {
    const std::uint64_t index = slot % kSlots;
    occupied_.set(index);
    if (next_slot_ != kUnknownSlot && slot < next_slot_) next_slot_ = slot;
    return append_to(ring_[index]);
  }
  // Room for one more event in the list of chunks that `head` starts (newest first).
  Event& append_to(std::uint32_t& head) {
    std::uint32_t chunk = head;
    if (chunk == kNone || links_[chunk].count == kChunkEvents) {
      const std::uint32_t fresh = allocate_chunk();
      links_[fresh].next = chunk;
      head = chunk = fresh;
    }
    return chunks_[chunk][links_[chunk].count++];
  }

  std::uint32_t allocate_chunk() {
    std::uint32_t chunk = free_;
    if (chunk != kNone) [[likely]] {
      free_ = links_[chunk].next;
    } else {
      chunk = grow_chunks();
    }
    links_[chunk].count = 0;
    return chunk;
  }

  void free_chunk(std::uint32_t chunk) {
    links_[chunk].next = free_;
    free_ = chunk;
  }

  [[gnu::noinline]] std::uint32_t grow_chunks() {
    chunks_.emplace_back();
    links_.emplace_back();
    return static_cast<std::uint32_t>(chunks_.size() - 1);
  }

  // Moves the events of occupied ring slot `index` into current_, in order, and frees their chunks.
  // All share the slot, so the picosecond within it and the order make one word to sort by: sorting
  // those words with the events' positions is several times cheaper than sorting the events.
  void take_slot(std::uint64_t index) {
    std::uint32_t chunk = ring_[index];
    ring_[index] = kNone;
    assert(chunk != kNone);
    if (links_[chunk].count == 1 && links_[chunk].next == kNone) {  // not looked up ahead
      current_.push_back(chunks_[chunk][0]);
      free_chunk(chunk);
      return;
    }
    // A freed chunk keeps its events until a push reuses it, and nothing is pushed before they are
    // copied out below: they are read in place, in order, with no copy aside. Chunks are linked
    // newest first; walked oldest first, the events come in the order they were added.
    slot_chunks_.clear();
    for (; chunk != kNone; chunk = links_[chunk].next) slot_chunks_.push_back(chunk);
    keys_.clear();
    for (auto c = slot_chunks_.rbegin(); c != slot_chunks_.rend(); ++c) {
      for (std::uint32_t i = 0; i < links_[*c].count; ++i) {
        const Event& e = chunks_[*c][i];
        const auto ps_in_slot = static_cast<std::uint64_t>(e.at.ps()) & ((1U << kSlotBits) - 1);
        keys_.push_back(PlaceInSlot{(ps_in_slot << Event::kOrderBits) | e.order,
                                    std::uint64_t{*c} * kChunkEvents + i});
      }
      free_chunk(*c);
    }
    sort_keys();
    for (const PlaceInSlot& k : keys_) {
      current_.push_back(chunks_[k.position / kChunkEvents][k.position % kChunkEvents]);
    }
  }

  // Puts keys_ in order. A crowded slot (thousands of hosts) is sorted by its picosecond and phase
  // alone, stably, in three counting passes of six bits, where a comparison sort of some 250 keys
  // costs several times more: ties are left in the order the events were added to the slot, which
  // is their sequence order. Pushes add in sequence order, and the events admitted from beyond the
  // horizon, which are older, join a slot as it comes within the horizon, before any push can reach
  // it, themselves in (time, order) order.
  void sort_keys() {
    const auto by_key = [](const PlaceInSlot& a, const PlaceInSlot& b) { return a.key < b.key; };
    if (keys_.size() < kCountingSortFrom) {
      std::sort(keys_.begin(), keys_.end(), by_key);
      return;
    }
    sorted_keys_.resize(keys_.size());
    for (int shift = Event::kSequenceBits; shift < 64; shift += kDigitBits) {
      std::array<std::uint32_t, kDigits> starts{};
      for (const PlaceInSlot& k : keys_) ++starts[(k.key >> shift) % kDigits];
      if (starts[(keys_[0].key >> shift) % kDigits] == keys_.size()) continue;  // all alike
      std::uint32_t start = 0;
      for (std::uint32_t& s : starts) start += std::exchange(s, start);
      for (const PlaceInSlot& k : keys_) sorted_keys_[starts[(k.key >> shift) % kDigits]++] = k;
      keys_.swap(sorted_keys_);
    }
    assert(std::is_sorted(keys_.begin(), keys_.end(), by_key));
  }

  // An event scheduled into the slot in hand usually runs after everything in it (it has the
  // latest sequence) and is appended; one that must run before some of it goes to the heap of
  // late arrivals. Either way a burst of n events at one instant costs n log n at most.
  void insert_in_current(const Event& e) {
    if (current_slot_empty() || current_.back().runs_before(e)) {
      current_.push_back(e);
    } else {
      late_.push_back(e);
      std::push_heap(late_.begin(), late_.end(), LaterFirst{});
    }
  }

  [[nodiscard]] bool current_slot_empty() const {
    return next_ == current_.size() && late_.empty();
  }

  // Moves the clock's slot to the next one holding events and takes them in, sorted, unless that
  // slot lies after `limit_slot`: then the clock's slot moves up to `limit_slot` (never back) and
  // it returns false. Either way the events the ring's horizon now covers leave the heap. The
  // current slot must be empty.
  bool advance(std::uint64_t limit_slot) {
    return take_lone_next_event(limit_slot) || advance_to_next_slot(limit_slot);
  }

  // A sparse fabric's usual step, which advance_to_next_slot would take at several times the cost:
  // the next occupied slot, already looked up, holds a single event, and no event waiting past the
  // horizon comes within reach of it.
  bool take_lone_next_event(std::uint64_t limit_slot) {
    if (next_slot_ > limit_slot) return false;  // also when not looked up (kUnknownSlot)
    const std::uint64_t index = next_slot_ % kSlots;
    const std::uint32_t chunk = ring_[index];
    if (links_[chunk].count != 1 || links_[chunk].next != kNone) return false;
    // Into the next bucket, the ring reaches one bucket further: its events come in first.
    if (next_slot_ >= ring_end_slot() - kBucketSlots) return false;
    current_.clear();
    next_ = 0;
    current_slot_ = next_slot_;
    next_slot_ = kUnknownSlot;
    ring_[index] = kNone;
    current_.push_back(chunks_[chunk][0]);
    free_chunk(chunk);
    vacate(index);
    fetch_chunk_ = kNone;
    return true;
  }

  [[gnu::noinline]] bool advance_to_next_slot(std::uint64_t limit_slot) {
    current_.clear();
    next_ = 0;
    if (!occupied_.any()) bring_far_within_reach(limit_slot);
    std::uint64_t next = std::numeric_limits<std::uint64_t>::max();
    if (occupied_.any()) next = next_slot_ != kUnknownSlot ? next_slot_ : next_occupied_slot();
    const bool found = next <= limit_slot;
    next_slot_ = kUnknownSlot;
    move_clock(found ? next : std::max(current_slot_, limit_slot));
    if (!found) return false;
    const std::uint64_t index = current_slot_ % kSlots;
    take_slot(index);
    vacate(index);
    start_fetching_next_slot();
    // The first runs now, too soon for a fetch to help.
    const std::size_t n = std::min(current_.size(), kPrefetchAhead);
    for (std::size_t i = 1; i < n; ++i) prefetch(current_[i]);
    return true;
  }

  // The chunks of the next occupied slot were mostly written microseconds of simulated time ago,
  // long gone from the cache at scale: while the slot in hand runs, they are fetched a line per
  // event, so that sorting them waits on none.
  void start_fetching_next_slot() {
    fetch_chunk_ = kNone;
    if (!occupied_.any() || current_.size() < kFetchSlotAbove) return;
    fetch_chunk_ = ring_[next_occupied_slot() % kSlots];
    fetch_line_ = 0;
  }
  void prefetch_next_slot_line() {
    if (fetch_chunk_ == kNone) return;
    __builtin_prefetch(reinterpret_cast<const char*>(&chunks_[fetch_chunk_]) + 64 * fetch_line_);
    if (++fetch_line_ == kChunkLines) {
      fetch_line_ = 0;
      fetch_chunk_ = links_[fetch_chunk_].next;
    }
  }

  // Moves the clock's slot to `slot` (never back), and with it the ring's reach: the events of the
  // buckets it now covers leave the heap and the far wheel for their slots, the heap's first. For
  // each slot that keeps them in the order they were scheduled, as sort_keys needs: a bucket's
  // events went to the heap until it came within the far wheel's horizon, and to the ring only
  // once within the ring's. Only advance() calls it, so an event that falls in the clock's own slot
  // is taken from the ring straight away.
  void move_clock(std::uint64_t slot) {
    const std::uint64_t first_admitted = ring_end_slot() / kBucketSlots;
    current_slot_ = slot;
    const std::uint64_t ring_end = ring_end_slot();
    if (ring_end / kBucketSlots == first_admitted) return;
    while (!beyond_.empty() && slot_of(beyond_.front().at) < ring_end) {
      std::pop_heap(beyond_.begin(), beyond_.end(), LaterFirst{});
      append_in_ring(slot_of(beyond_.back().at)) = beyond_.back();
      beyond_.pop_back();
    }
    while (far_occupied_.any()) {
      const std::uint64_t bucket = first_far_bucket(first_admitted);
      if (bucket >= ring_end / kBucketSlots) break;
      admit_far_bucket(bucket % kBuckets);
    }
  }
  // Moves a far bucket's events to the ring's slots, oldest first. Each is copied out before the
  // ring takes a chunk, which may grow the pool; a chunk goes back to it once read.
  void admit_far_bucket(std::uint64_t index) {
    slot_chunks_.clear();
    for (std::uint32_t c = far_[index]; c != kNone; c = links_[c].next) slot_chunks_.push_back(c);
    far_[index] = kNone;
    far_occupied_.clear(index);
    for (auto c = slot_chunks_.rbegin(); c != slot_chunks_.rend(); ++c) {
      for (std::uint32_t i = 0; i < links_[*c].count; ++i) {
        const Event e = chunks_[*c][i];
        append_in_ring(slot_of(e.at)) = e;
      }
      free_chunk(*c);
    }
  }
  // The ring holds no event: the clock moves ahead to where the ring reaches the first bucket that
  // holds one, in the far wheel or the heap, or to `limit_slot` if that comes first.
  void bring_far_within_reach(std::uint64_t limit_slot) {
    std::uint64_t bucket = std::numeric_limits<std::uint64_t>::max();
    if (far_occupied_.any()) bucket = first_far_bucket(ring_end_slot() / kBucketSlots);
    if (!beyond_.empty()) bucket = std::min(bucket, slot_of(beyond_.front().at) / kBucketSlots);
    if (bucket == std::numeric_limits<std::uint64_t>::max()) return;
    const std::uint64_t reaching = std::min((bucket - 1) * kBucketSlots, limit_slot);
    if (reaching > current_slot_) move_clock(reaching);
  }
  // The first bucket of the far wheel that holds events, from bucket `from` on; some bucket must.
  [[nodiscard]] std::uint64_t first_far_bucket(std::uint64_t from) const {
    const std::uint64_t index = far_occupied_.first_from(from % kBuckets);
    return from + ((index - from) % kBuckets);
  }

  template <std::size_t N>
  static std::array<std::uint32_t, N> make_empty_wheel() {
    std::array<std::uint32_t, N> wheel{};
    wheel.fill(kNone);
    return wheel;
  }

  void vacate(std::uint64_t index) { occupied_.clear(index); }

  // The ring holds the events of the slots before this one (and after the clock's), whole buckets
  // of the far wheel: the clock's and the next.
  [[nodiscard]] std::uint64_t ring_end_slot() const {
    return (current_slot_ / kBucketSlots + 2) * kBucketSlots;
  }

  // The first occupied slot after the current one, going round the ring once.
  [[nodiscard]] std::uint64_t next_occupied_slot() const {
    const std::uint64_t index = occupied_.first_from((current_slot_ + 1) % kSlots);
    return current_slot_ + ((index - current_slot_) % kSlots);
  }

  // The clock's slot: its events in order from next_ on, and those scheduled into it that run
  // before some of them.
  std::vector<Event> current_;
  std::size_t next_ = 0;
  std::vector<Event> late_;  // min-heap
  // take_slot's scratch: a slot's chunks (admit_far_bucket's: a bucket's), its events in order, and
  // sort_keys' second buffer.
  std::vector<std::uint32_t> slot_chunks_;
  std::vector<PlaceInSlot> keys_;
  std::vector<PlaceInSlot> sorted_keys_;
  static constexpr std::size_t kCountingSortFrom = 64;
  static constexpr int kDigitBits = 6;
  static constexpr std::uint32_t kDigits = 1U << kDigitBits;
  static_assert((64 - Event::kSequenceBits) % kDigitBits == 0, "whole digits above the sequence");
  std::uint64_t current_slot_ = 0;
  // The first occupied slot after the clock's, once pop_not_after has looked it up, kept up to date
  // by pushes until advance moves there (slots are only vacated by advance); else kUnknownSlot.
  static constexpr std::uint64_t kUnknownSlot = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t next_slot_ = kUnknownSlot;
  // Slot s of the horizon is a list of chunks at s % kSlots, the chunks drawn from one pool whose
  // free list hands back the most recently freed (and so cached) chunk first. Chunks of several
  // events keep a crowded slot contiguous and a sparse one to a line or two. A chunk's fill count
  // and link are kept apart from its events, in a small array that stays cached: a microsecond of
  // scheduled events is more than the L2 holds, and adding one to a slot then waits on no load
  // from the chunk's lines, only stores to them.
  static constexpr std::uint32_t kChunkEvents = 8;
  using Chunk = std::array<Event, kChunkEvents>;
  struct ChunkLink {
    std::uint32_t count;
    std::uint32_t next;
  };
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::uint32_t kChunkLines = sizeof(Chunk) / 64 + 1;  // it need not start a line
  // Below this many events a slot is cached anyway (a fabric small enough to have sparse slots
  // fits the cache), or too short to fetch the next one behind.
  static constexpr std::size_t kFetchSlotAbove = 128;
  std::vector<Chunk> chunks_;
  std::vector<ChunkLink> links_;       // one per chunk
  std::uint32_t fetch_chunk_ = kNone;  // the next line of the next slot to fetch
  std::uint32_t fetch_line_ = 0;
  std::uint32_t free_ = kNone;
  std::array<std::uint32_t, kSlots> ring_ = make_empty_wheel<kSlots>();
  CircularBitset<kSlots> occupied_;
  // The far wheel: bucket b of the kBuckets after the ring's reach holds its events at
  // b % kBuckets, a list of chunks from the ring's pool, unsorted, in the order they were
  // scheduled; they move to the ring's slots as the ring comes to reach the bucket. An event
  // scheduled microseconds to milliseconds ahead (a flow's end at flow level, a timer) is thus
  // copied twice, where a heap would sift it through its depth twice.
  std::array<std::uint32_t, kBuckets> far_ = make_empty_wheel<kBuckets>();
  CircularBitset<kBuckets> far_occupied_;
  std::vector<Event> beyond_;  // min-heap of events past the far wheel's horizon
  std::size_t size_ = 0;
  struct Look {
    EventFn fn = nullptr;
    LookAhead look = nullptr;
    LookAhead last_look = nullptr;
  };
  [[nodiscard]] const Look* look_of(EventFn fn) const {
    // The first kind asked for is the commonest (a fabric's arrivals): it is found without a loop.
    if (look_kinds_ != 0 && looks_[0].fn == fn) return &looks_[0];
    for (std::uint32_t k = 1; k < look_kinds_; ++k) {
      if (looks_[k].fn == fn) return &looks_[k];
    }
    return nullptr;
  }
  std::array<Look, kLookKinds> looks_{};
  std::uint32_t look_kinds_ = 0;
  bool last_looks_ = false;  // some kind has a last look
  std::uint64_t next_sequence_ = 0;
};

}  // namespace lockstep

// Storage for objects that come and go at high rate (packets): slabs that are never returned to the
// system and a free list, so that once the pool has grown to the peak number alive, acquiring and
// releasing allocate nothing. Addresses are stable for an object's lifetime. The free list runs
// through the free slots themselves, and a new slab is handed out front to back as it is needed,
// so growing touches no memory: on the machines here a page's first touch costs some 10 us, and a
// pool sized for a whole slab up front cost a small run a millisecond. A slab of 2 MiB or more is
// aligned to, and asks the kernel for, transparent huge pages: at scale, live packets spread over
// tens of megabytes, and with 4 KiB pages nearly every packet touched would also miss the TLB.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace lockstep {

template <class T, std::size_t SlabSize = 1024>
class ObjectPool {
 public:
  ObjectPool() = default;
  ObjectPool(const ObjectPool&) = delete;
  ObjectPool& operator=(const ObjectPool&) = delete;
  ~ObjectPool() = default;  // objects still alive are the owner's leak; their storage goes anyway

  template <class... Args>
  [[nodiscard]] T* acquire(Args&&... args) {
    Slot* slot = free_;
    if (slot != nullptr) {
      free_ = slot->next_free;
    } else {
      if (unused_ == unused_end_) grow();
      slot = unused_++;
    }
    ++in_use_;
    return std::construct_at(reinterpret_cast<T*>(slot->bytes), std::forward<Args>(args)...);
  }

  void release(T* object) {
    std::destroy_at(object);
    Slot* slot = std::construct_at(reinterpret_cast<Slot*>(object));
    slot->next_free = free_;
    free_ = slot;
    --in_use_;
  }

  [[nodiscard]] std::size_t in_use() const { return in_use_; }
  [[nodiscard]] std::size_t capacity() const { return slabs_.size() * SlabSize; }

 private:
  union Slot {
    alignas(T) std::byte bytes[sizeof(T)];
    Slot* next_free;
  };
  struct FreeSlab {
    void operator()(Slot* slab) const { std::free(slab); }
  };
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;
  static constexpr std::size_t kSlabBytes = SlabSize * sizeof(Slot);
  static constexpr bool kHugeSlabs = kSlabBytes >= kHugePage;
  static constexpr std::size_t kSlabAlignment =
      std::max(kHugeSlabs ? kHugePage : alignof(Slot), alignof(std::max_align_t));

  void grow() {
    // aligned_alloc wants a size that is a multiple of the alignment.
    constexpr std::size_t bytes =
        (kSlabBytes + kSlabAlignment - 1) / kSlabAlignment * kSlabAlignment;
    std::unique_ptr<Slot, FreeSlab> slab(
        static_cast<Slot*>(std::aligned_alloc(kSlabAlignment, bytes)));
    if (slab == nullptr) throw std::bad_alloc();
    if constexpr (kHugeSlabs) {
      madvise(slab.get(), bytes, MADV_HUGEPAGE);  // advice: failure is harmless
    }
    slabs_.push_back(std::move(slab));  // owned before any slot is handed out
    unused_ = slabs_.back().get();
    unused_end_ = unused_ + SlabSize;
  }

  std::vector<std::unique_ptr<Slot, FreeSlab>> slabs_;
  Slot* free_ = nullptr;  // most recently released first, while its lines are still cached
  // The newest slab's slots never handed out yet.
  Slot* unused_ = nullptr;
  Slot* unused_end_ = nullptr;
  std::size_t in_use_ = 0;
};

}  // namespace lockstep

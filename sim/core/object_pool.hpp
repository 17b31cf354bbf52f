// Storage for objects that come and go at high rate (packets): slabs that are never returned to the
// system and a free list, so that once the pool has grown to the peak number alive, acquiring and
// releasing allocate nothing. Addresses are stable for an object's lifetime. The free list runs
// through the free slots themselves, and a new slab is handed out front to back as it is needed,
// so growing touches no memory: on the machines here a page's first touch costs some 10 us, and a
// pool sized for a whole slab up front cost a small run a millisecond. A slab of 2 MiB or more is a
// mapping of its own, aligned to, and asking the kernel for, transparent huge pages: at scale, live
// packets spread over tens of megabytes, and with 4 KiB pages nearly every packet touched would
// also miss the TLB. (Carved from the heap instead, each slab would leave up to 2 MiB of alignment
// before it for small blocks to scatter over, and a huge-page heap keeps all of that resident:
// Perm-1024 at 1000 B peaked at 114 MB that way, against 69 MB.)
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
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
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;
  static constexpr std::size_t kSlabBytes = SlabSize * sizeof(Slot);
  static constexpr bool kHugeSlabs = kSlabBytes >= kHugePage;
  static constexpr std::size_t kSlabAlignment =
      std::max(kHugeSlabs ? kHugePage : alignof(Slot), alignof(std::max_align_t));
  // aligned_alloc wants a size that is a multiple of the alignment, and so do huge pages.
  static constexpr std::size_t kAllocatedBytes =
      (kSlabBytes + kSlabAlignment - 1) / kSlabAlignment * kSlabAlignment;

  struct FreeSlab {
    void operator()(Slot* slab) const {
      if constexpr (kHugeSlabs) {
        munmap(slab, kAllocatedBytes);
      } else {
        std::free(slab);
      }
    }
  };

  // A mapping of whole huge pages: mapped with a huge page's worth to spare, and trimmed to the
  // aligned part.
  static Slot* map_huge_slab() {
    void* const mapped = mmap(nullptr, kAllocatedBytes + kHugePage, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED) throw std::bad_alloc();
    auto* const start = static_cast<std::byte*>(mapped);
    const std::size_t lead =
        (kHugePage - reinterpret_cast<std::uintptr_t>(start) % kHugePage) % kHugePage;
    if (lead != 0) munmap(start, lead);
    std::byte* const slab = start + lead;
    munmap(slab + kAllocatedBytes, kHugePage - lead);
    madvise(slab, kAllocatedBytes, MADV_HUGEPAGE);  // advice: failure is harmless
    return reinterpret_cast<Slot*>(slab);
  }

  void grow() {
    std::unique_ptr<Slot, FreeSlab> slab;
    if constexpr (kHugeSlabs) {
      slab.reset(map_huge_slab());
    } else {
      slab.reset(static_cast<Slot*>(std::aligned_alloc(kSlabAlignment, kAllocatedBytes)));
      if (slab == nullptr) throw std::bad_alloc();
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

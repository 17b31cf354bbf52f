// Storage for objects that come and go at high rate (packets): slabs that are never returned to the
// system and a free list, so that once the pool has grown to the peak number alive, acquiring and
// releasing allocate nothing. Addresses are stable for an object's lifetime. A slab of 2 MiB or
// more is aligned to, and asks the kernel for, transparent huge pages: at scale, live packets
// spread over tens of megabytes, and with 4 KiB pages nearly every packet touched would also miss
// the TLB.
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
    if (free_.empty()) grow();
    Slot* slot = free_.back();
    free_.pop_back();
    ++in_use_;
    return std::construct_at(reinterpret_cast<T*>(slot->bytes), std::forward<Args>(args)...);
  }

  void release(T* object) {
    std::destroy_at(object);
    free_.push_back(reinterpret_cast<Slot*>(object));
    --in_use_;
  }

  [[nodiscard]] std::size_t in_use() const { return in_use_; }
  [[nodiscard]] std::size_t capacity() const { return slabs_.size() * SlabSize; }

 private:
  struct Slot {
    alignas(T) std::byte bytes[sizeof(T)];
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
    Slot* slots = slab.get();
    slabs_.push_back(std::move(slab));  // owned before any slot is handed out
    free_.reserve(capacity());
    // Hand out the new slab front to back.
    for (std::size_t i = SlabSize; i > 0; --i) free_.push_back(&slots[i - 1]);
  }

  std::vector<std::unique_ptr<Slot, FreeSlab>> slabs_;
  std::vector<Slot*> free_;
  std::size_t in_use_ = 0;
};

}  // namespace lockstep

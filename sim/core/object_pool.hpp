// Storage for objects that come and go at high rate (packets, messages): slabs that are never
// returned to the system and a free list, so that once the pool has grown to the peak number alive,
// acquiring and releasing allocate nothing. Addresses are stable for an object's lifetime.
#pragma once

#include <cstddef>
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

  void grow() {
    slabs_.push_back(std::make_unique<Slot[]>(SlabSize));
    free_.reserve(capacity());
    Slot* slab = slabs_.back().get();
    // Hand out the new slab front to back.
    for (std::size_t i = SlabSize; i > 0; --i) free_.push_back(&slab[i - 1]);
  }

  std::vector<std::unique_ptr<Slot[]>> slabs_;
  std::vector<Slot*> free_;
  std::size_t in_use_ = 0;
};

}  // namespace lockstep

// A hash map in one block of slots (open addressing with linear probing), for the maps on the
// per-message path that are looked up and erased but never iterated: messages in flight by id,
// queue pairs' pacing by their ends. std::unordered_map allocates a node for every entry and frees
// it at the erase, once per message; this allocates only when it grows past half full, doubling,
// and keeps its room. An erase shifts the entries after it back (Knuth, TAOCP vol. 3, 6.4,
// algorithm R), so lookups never wade through deleted slots.
//
// References and pointers into it are valid until the next insertion.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "sim/core/hash.hpp"

namespace lockstep {

struct Mix64Hash {
  [[nodiscard]] std::size_t operator()(std::uint64_t key) const {
    return static_cast<std::size_t>(mix64(key));
  }
};

template <class Key, class Value, class Hash = Mix64Hash>
class FlatHashMap {
 public:
  [[nodiscard]] std::size_t size() const { return size_; }

  [[nodiscard]] Value* find(const Key& key) {
    const std::size_t i = slot_of(key);
    return i == kAbsent ? nullptr : &slots_[i].value;
  }
  [[nodiscard]] const Value* find(const Key& key) const {
    const std::size_t i = slot_of(key);
    return i == kAbsent ? nullptr : &slots_[i].value;
  }
  [[nodiscard]] const Value& at(const Key& key) const {
    const Value* value = find(key);
    if (value == nullptr) throw std::out_of_range("FlatHashMap::at: no such key");
    return *value;
  }

  // Inserts a default value for a key it does not hold.
  Value& operator[](const Key& key) { return *insert(key, Value()).first; }

  // Inserts `value` unless the key is there already; returns the key's value and whether it was
  // inserted.
  std::pair<Value*, bool> insert(const Key& key, Value value) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    std::size_t i = home(key);
    for (; slots_[i].used; i = next(i)) {
      if (slots_[i].key == key) return {&slots_[i].value, false};
    }
    slots_[i] = Slot{key, std::move(value), true};
    ++size_;
    return {&slots_[i].value, true};
  }

  // Removes the key and returns its value, if it was there.
  std::optional<Value> take(const Key& key) {
    const std::size_t i = slot_of(key);
    if (i == kAbsent) return std::nullopt;
    std::optional<Value> taken(std::move(slots_[i].value));
    remove_slot(i);
    return taken;
  }

  bool erase(const Key& key) {
    const std::size_t i = slot_of(key);
    if (i == kAbsent) return false;
    remove_slot(i);
    return true;
  }

 private:
  struct Slot {
    Key key{};
    Value value{};
    bool used = false;
  };
  static constexpr std::size_t kFirstCapacity = 16;  // a power of two, as every capacity after it
  static constexpr std::size_t kAbsent = static_cast<std::size_t>(-1);

  [[nodiscard]] std::size_t home(const Key& key) const { return Hash{}(key) & (slots_.size() - 1); }
  [[nodiscard]] std::size_t next(std::size_t i) const { return (i + 1) & (slots_.size() - 1); }
  [[nodiscard]] std::size_t slot_of(const Key& key) const {
    if (slots_.empty()) return kAbsent;
    for (std::size_t i = home(key);; i = next(i)) {
      if (!slots_[i].used) return kAbsent;
      if (slots_[i].key == key) return i;
    }
  }

  void remove_slot(std::size_t hole) {
    slots_[hole] = Slot();
    --size_;
    // An entry after the hole moves into it unless its home lies cyclically in (hole, entry]:
    // then a lookup from its home would never pass the hole.
    for (std::size_t i = next(hole); slots_[i].used; i = next(i)) {
      const std::size_t entry_home = home(slots_[i].key);
      const bool reachable_without_hole = hole < i ? (hole < entry_home && entry_home <= i)
                                                   : (hole < entry_home || entry_home <= i);
      if (reachable_without_hole) continue;
      slots_[hole] = std::move(slots_[i]);
      slots_[i] = Slot();
      hole = i;
    }
  }

  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? kFirstCapacity : 2 * old.size(), Slot());
    size_ = 0;
    for (Slot& slot : old) {
      if (slot.used) insert(slot.key, std::move(slot.value));
    }
  }

  std::vector<Slot> slots_;
  std::size_t size_ = 0;
};

}  // namespace lockstep

// SeqSlotIndex: which slot holds each live sequence, by id (PagedAllocator's index).
//
// An open-addressing table of (id, slot) entries, linear probing over a power-of-two
// capacity kept at most half full, with deletion by backward shift (no tombstones), so a
// probe stays within one short cluster. A node-based map allocates a node per sequence and
// makes every lookup a dependent load of a cold node; in a fleet, admission, the id-based
// calls and the free of each request paid those misses (issue #40's profiles). Ids are hashed
// multiplicatively, so ids counting up or sharing low bits spread over the table.
// Invariants (validate checks them): every entry sits in the cluster that starts at its
// home bucket; size() entries are occupied. Not thread-safe; a plain value type.
#pragma once

#include <cstdint>
#include <vector>

#include "allocator/kv_allocator.h"

namespace pagesim::alloc {

class SeqSlotIndex {
 public:
  static constexpr std::uint32_t kNone = SeqHandle::kNoSlot;

  // The slot of live sequence `id`, or kNone.
  std::uint32_t find(SeqId id) const {
    if (entries_.empty()) return kNone;
    for (std::size_t i = home(id);; i = (i + 1) & mask_) {
      const Entry& e = entries_[i];
      if (e.slot == kNone) return kNone;
      if (e.id == id) return e.slot;
    }
  }
  bool contains(SeqId id) const { return find(id) != kNone; }
  std::size_t size() const { return size_; }

  // REQUIRES: id is not indexed; slot != kNone.
  void insert(SeqId id, std::uint32_t slot) {
    if (2 * (size_ + 1) > entries_.size()) grow();
    place({id, slot});
    ++size_;
  }

  // Removes id; false when it is not indexed.
  bool erase(SeqId id) {
    if (entries_.empty()) return false;
    std::size_t i = home(id);
    for (;; i = (i + 1) & mask_) {
      if (entries_[i].slot == kNone) return false;
      if (entries_[i].id == id) break;
    }
    // Backward shift: move each later entry of the cluster into the hole when its home does
    // not lie cyclically in (hole, its position], so that every entry stays reachable.
    for (std::size_t j = (i + 1) & mask_;; j = (j + 1) & mask_) {
      const Entry& e = entries_[j];
      if (e.slot == kNone) break;
      const std::size_t h = home(e.id);
      if (((j - h) & mask_) >= ((j - i) & mask_)) {
        entries_[i] = e;
        i = j;
      }
    }
    entries_[i].slot = kNone;
    --size_;
    return true;
  }

  // Whether the invariants hold.
  bool valid() const {
    std::size_t n = 0;
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      if (entries_[i].slot == kNone) continue;
      ++n;
      for (std::size_t k = home(entries_[i].id); k != i; k = (k + 1) & mask_)
        if (entries_[k].slot == kNone) return false;  // unreachable from its home
    }
    return n == size_;
  }

 private:
  struct Entry {
    SeqId id = 0;
    std::uint32_t slot = kNone;  // kNone: the bucket is empty
  };

  std::size_t home(SeqId id) const {
    return static_cast<std::size_t>((id * 0x9E3779B97F4A7C15ull) >> shift_) & mask_;
  }
  void place(const Entry& e) {
    std::size_t i = home(e.id);
    while (entries_[i].slot != kNone) i = (i + 1) & mask_;
    entries_[i] = e;
  }
  void grow() {
    std::vector<Entry> old;
    old.swap(entries_);
    const std::size_t capacity = old.empty() ? 16 : 2 * old.size();
    entries_.assign(capacity, Entry{});
    mask_ = capacity - 1;
    shift_ = 64;
    for (std::size_t c = capacity; c > 1; c >>= 1) --shift_;  // the hash's top log2(capacity) bits
    for (const Entry& e : old)
      if (e.slot != kNone) place(e);
  }

  std::vector<Entry> entries_;
  std::size_t mask_ = 0;
  int shift_ = 64;
  std::size_t size_ = 0;
};

}  // namespace pagesim::alloc

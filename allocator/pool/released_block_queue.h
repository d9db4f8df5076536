// ReleasedBlockQueue: the never-cached free blocks of PagedAllocator's single free-block queue
// (vLLM v1's FreeKVCacheBlockQueue), oldest release first, each with its release time.
//
// A ring buffer of (release time, block) entries over a fixed capacity, allocated once:
// push_back at the tail, pop_front at the head, no allocation and no pointer chasing after
// construction. Only the two ends are touched, so both stay in cache, and the head's release
// time (what the allocator compares with the prefix cache's eviction victim) is read from the
// entry, not from a per-block array. The queue knows nothing of the pool: its owner keeps a
// block in it at most once. Not thread-safe.
#pragma once

#include <bit>
#include <cassert>
#include <cstdint>
#include <vector>

#include "allocator/block.h"

namespace pagesim::alloc {

class ReleasedBlockQueue {
 public:
  struct Entry {
    std::uint64_t released_at = 0;  // the owner's release clock when the block was released
    BlockId block = kNoBlock;
  };

  ReleasedBlockQueue() = default;
  // Room for `capacity` blocks (the pool's size). REQUIRES: capacity >= 0.
  explicit ReleasedBlockQueue(std::int64_t capacity)
      : ring_(std::bit_ceil(static_cast<std::uint64_t>(capacity > 0 ? capacity : 1))),
        mask_(ring_.size() - 1) {}

  bool empty() const { return size_ == 0; }
  std::int64_t size() const { return static_cast<std::int64_t>(size_); }
  // The oldest entry. REQUIRES: !empty().
  const Entry& front() const {
    assert(size_ > 0);
    return ring_[head_];
  }
  // REQUIRES: size() < the capacity given at construction.
  void push_back(BlockId b, std::uint64_t released_at) {
    assert(size_ < ring_.size());
    ring_[(head_ + size_) & mask_] = {released_at, b};
    ++size_;
  }
  // Removes and returns the oldest block. REQUIRES: !empty().
  BlockId pop_front() {
    assert(size_ > 0);
    const BlockId b = ring_[head_].block;
    head_ = (head_ + 1) & mask_;
    --size_;
    return b;
  }
  // Calls f(entry) for every entry, oldest first. O(size()): for validation.
  template <typename F>
  void for_each(F&& f) const {
    for (std::size_t i = 0; i < size_; ++i) f(ring_[(head_ + i) & mask_]);
  }

 private:
  std::vector<Entry> ring_;  // capacity: a power of two, >= the pool's blocks
  std::size_t mask_ = 0;
  std::size_t head_ = 0;  // index of the oldest entry
  std::size_t size_ = 0;
};

}  // namespace pagesim::alloc

// ReleasedBlockQueue: vLLM v1's single free-block queue (FreeKVCacheBlockQueue) as a paged
// pool keeps it — the release order of the pool's unreferenced blocks. Blocks released
// holding nothing cached wait here, oldest release first; blocks released holding a cached
// prefix wait on the owner's EvictionPolicy instead, but are stamped here with their release
// time, so that the next block a new owner gets is whichever of the queue's head and the
// policy's victim was released first (victim_goes_first). With lru that is exactly one queue.
// PagedAllocator keeps one over its GPU blocks, LargePagePool one over its large pages.
//
// A ring buffer of (release time, block) entries over a fixed capacity plus one release time
// per block, allocated once: push_back at the tail, pop_front at the head, no allocation and
// no pointer chasing after construction. The head's release time is read from its entry. The
// queue knows nothing of the pool: its owner keeps a block in it at most once.
//
// Invariants (its owner's validate checks them with for_each and clock()): entries are in
// strictly increasing release time, each at most clock(); a block is queued at most once.
// Not thread-safe.
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
    std::uint64_t released_at = 0;  // clock() when the block was released
    BlockId block = kNoBlock;
  };

  ReleasedBlockQueue() = default;
  // Over blocks [0, num_blocks) (the pool's size). REQUIRES: num_blocks >= 0.
  explicit ReleasedBlockQueue(std::int64_t num_blocks)
      : ring_(std::bit_ceil(static_cast<std::uint64_t>(num_blocks > 0 ? num_blocks : 1))),
        mask_(ring_.size() - 1),
        released_at_(static_cast<std::size_t>(num_blocks > 0 ? num_blocks : 0), 0) {}

  bool empty() const { return size_ == 0; }
  std::int64_t size() const { return static_cast<std::int64_t>(size_); }
  // The release time of the latest release, stamped or queued (0 before any).
  std::uint64_t clock() const { return clock_; }
  // The oldest entry. REQUIRES: !empty().
  const Entry& front() const {
    assert(size_ > 0);
    return ring_[head_];
  }

  // b's last reference was dropped and b keeps a cached prefix: it waits on the owner's
  // eviction policy, with this release time. REQUIRES: b < num_blocks.
  void stamp(BlockId b) { released_at_[static_cast<std::size_t>(b)] = ++clock_; }
  // b's last reference was dropped and it holds nothing cached: it waits at the tail.
  // REQUIRES: b < num_blocks, b not queued (so size() < num_blocks).
  void push_back(BlockId b) {
    assert(size_ < ring_.size());
    stamp(b);
    ring_[(head_ + size_) & mask_] = {clock_, b};
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

  // Whether the eviction policy's `victim` goes before the queue's head: it was released
  // first, or the queue is empty. kNoBlock (no evictable block): false.
  // REQUIRES: victim, if any, was stamped at its release.
  bool victim_goes_first(BlockId victim) const {
    return victim != kNoBlock && (empty() || released_at_[static_cast<std::size_t>(victim)] < front().released_at);
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
  std::vector<std::uint64_t> released_at_;  // per block: clock_ at its last release
  std::uint64_t clock_ = 0;
};

}  // namespace pagesim::alloc

// BlockPool: a fixed pool of equal-size KV blocks with reference counts and fill levels.
//
// Blocks are identified by dense ids [0, num_blocks). A block is either on the free list
// (ref_count 0, not owned) or owned by the pool's user, who tracks references to it; the
// pool does not know who refers to a block, only how many. Fill level = how many of the
// block's slots hold KV. Used for the GPU pool and for the CPU swap pool of PagedAllocator.
//
// Invariants (checked by PagedAllocator::validate):
//   free_list_.size() + owned blocks == num_blocks
//   a block on the free list has ref_count 0 and filled 0, and appears there once
// The pool hands out the lowest-numbered free blocks first at start-up, then LIFO, so runs
// are deterministic. Not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

namespace pagesim::alloc {

using BlockId = std::int32_t;
inline constexpr BlockId kNoBlock = -1;

class BlockPool {
 public:
  // REQUIRES: num_blocks >= 0, block_size >= 1 (checked by the owner).
  BlockPool(std::int64_t num_blocks, std::int32_t block_size);

  std::int64_t num_blocks() const { return static_cast<std::int64_t>(ref_count_.size()); }
  std::int32_t block_size() const { return block_size_; }
  std::int64_t num_free() const { return static_cast<std::int64_t>(free_list_.size()); }

  // Takes a block off the free list with ref_count 1 and filled 0. REQUIRES: num_free() > 0.
  BlockId take() {
    BlockId b = free_list_.back();
    free_list_.pop_back();
    ref_count_[b] = 1;
    return b;
  }
  // Returns an unreferenced block to the free list. REQUIRES: ref_count(b) == 0.
  void give_back(BlockId b) {
    filled_[b] = 0;
    free_list_.push_back(b);
  }

  std::int32_t ref_count(BlockId b) const { return ref_count_[b]; }
  void add_ref(BlockId b) { ++ref_count_[b]; }
  // Drops one reference; returns the count left.
  std::int32_t drop_ref(BlockId b) { return --ref_count_[b]; }

  std::int32_t filled(BlockId b) const { return filled_[b]; }
  void set_filled(BlockId b, std::int32_t f) { filled_[b] = f; }

  const std::vector<BlockId>& free_list() const { return free_list_; }

 private:
  std::int32_t block_size_;
  std::vector<std::int32_t> ref_count_;  // per block: references from block tables
  std::vector<std::int32_t> filled_;     // per block: slots holding KV, 0..block_size
  std::vector<BlockId> free_list_;       // LIFO stack of unowned blocks
};

}  // namespace pagesim::alloc

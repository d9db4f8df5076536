// BuddyPlacement: a binary buddy allocator over a pool of blocks, the vLLM paper's model of
// Orca's KV memory.
//
// The pool is num_blocks blocks of block_size slots. A chunk of order k is 2^k blocks whose
// block offset is a multiple of 2^k; the largest order is max_order (128 blocks = 2,048 tokens
// in the paper). A range of n slots takes one chunk of ceil(n / block_size) blocks rounded up
// to a power of two. The block count need not be a power of two (the paper's 983): the pool
// starts as maximal aligned chunks of order <= max_order, left to right
// (983 = 7 x 128 + 64 + 16 + 4 + 2 + 1).
//
// Allocation takes the lowest-address free chunk of the needed order; when that order has
// none, it splits the lowest-address chunk of the smallest larger order that has one,
// keeping the lower half at each step. Freeing merges a chunk with its buddy
// (offset XOR 2^k) for as long as the buddy is free at the same order, up to max_order.
// So results are reproducible and can be checked by hand.
//
// Owns its free lists; not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "allocator/contiguous/placement.h"

namespace pagesim::alloc {

class BuddyPlacement final : public Placement {
 public:
  // REQUIRES (else AllocatorError): capacity_slots >= 1; block_size and max_chunk_blocks
  // powers of two; capacity_slots a multiple of block_size.
  BuddyPlacement(std::int64_t capacity_slots, std::int64_t block_size,
                 std::int64_t max_chunk_blocks);

  std::string name() const override;
  std::int64_t capacity_slots() const override { return num_blocks_ * block_size_; }
  std::int64_t free_slots() const override { return free_blocks_ * block_size_; }
  std::int64_t range_slots(std::int64_t slots) const override;
  std::int64_t max_range_slots() const override { return max_range_blocks_ * block_size_; }
  bool can_place(std::int64_t range_slots) const override;
  std::optional<std::int64_t> place(std::int64_t range_slots) override;
  void release(SlotRange range) override;
  std::int64_t unusable_free(std::int64_t range_slots) const override;
  std::vector<SlotRange> free_holes() const override;
  void check_range_shape(SlotRange range) const override;
  void validate() const override;

  std::int64_t block_size() const { return block_size_; }
  std::int64_t num_blocks() const { return num_blocks_; }
  int max_order() const { return max_order_; }
  // Order of the chunk that a range of `slots` slots takes: ceil(log2(ceil(slots / block))).
  // REQUIRES: 1 <= slots <= max_range_slots().
  int order_for(std::int64_t slots) const;
  // Block offsets of the free chunks of `order`, ascending. REQUIRES: 0 <= order <= max_order().
  std::vector<std::int64_t> free_chunks(int order) const;

 private:
  // Lowest order >= `order` with a free chunk, or nullopt.
  std::optional<int> smallest_free_order_at_least(int order) const;
  void check_expensive() const;

  std::int64_t block_size_;  // slots per block; a power of two
  std::int64_t num_blocks_;  // blocks in the pool; any count >= 1
  int max_order_;            // chunks hold at most 2^max_order_ blocks
  // The largest chunk of an empty pool: min(2^max_order_, bit_floor(num_blocks_)).
  std::int64_t max_range_blocks_;
  // free_chunks_[k] = block offsets of the free chunks of order k.
  // INVARIANT: offset % 2^k == 0 and offset + 2^k <= num_blocks_ (aligned, inside the pool).
  // INVARIANT: for k < max_order_, a chunk's buddy (offset ^ 2^k) is never also in
  //            free_chunks_[k]: release() would have merged them.
  // INVARIANT: free chunks and held ranges never overlap and together cover the pool.
  // An ordered set so that begin() is the lowest address: the deterministic choice.
  std::vector<std::set<std::int64_t>> free_chunks_;
  std::int64_t free_blocks_;  // INVARIANT: sum over k of |free_chunks_[k]| * 2^k
};

}  // namespace pagesim::alloc

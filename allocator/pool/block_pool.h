// BlockPool: a fixed pool of equal-size KV blocks with reference counts and fill levels.
//
// Blocks are identified by dense ids [0, num_blocks). A block is either on the free list
// (ref_count 0, not owned) or owned by the pool's user, who tracks references to it; the
// pool does not know who refers to a block, only how many. Fill level = how many of the
// block's slots hold KV. Used for PagedAllocator's GPU pool and CPU swap pool (which the CPU
// offload tier shares), the disk tier's pool, and LargePagePool's large pages.
//
// Blocks never taken yet are free without an entry or a place on the free list: ids
// [used(), num_blocks), handed out in ascending order once the free list is empty. So a pool
// writes memory only for the blocks it has used (a fleet's CPU swap pools, most never used,
// cost no page), and take()'s order is what a stack holding every id from the start gives:
// the lowest-numbered free blocks first at start-up, then LIFO, so runs are deterministic.
//
// Invariants (checked by its owner's validate):
//   free_list_.size() + (num_blocks - used()) + owned blocks == num_blocks
//   a block on the free list appears there once and has an entry (id < used()); its
//   ref_count and filled are 0, or, if it came back through give_back_sole, what they were
//   (take() resets them, take_unwritten() leaves them); a block never used reads ref_count 0
//   and filled 0
//   shared_blocks_ == the blocks with ref_count >= 2
// Not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "allocator/block.h"

namespace pagesim::alloc {

class BlockPool {
 public:
  // REQUIRES: num_blocks >= 0, block_size >= 1 (checked by the owner).
  BlockPool(std::int64_t num_blocks, std::int32_t block_size);

  std::int64_t num_blocks() const { return num_blocks_; }
  std::int32_t block_size() const { return block_size_; }
  std::int64_t num_free() const { return static_cast<std::int64_t>(free_list_.size()) + num_blocks_ - used(); }
  // Blocks taken at least once: ids [0, used()). The others are free and were never used.
  std::int64_t used() const { return static_cast<std::int64_t>(meta_.size()); }

  // Takes the free list's top, or the lowest block never used when the list is empty, with
  // ref_count 1 and filled 0. REQUIRES: num_free() > 0.
  BlockId take() {
    const BlockId b = take_unwritten();
    own(b, 0);
    return b;
  }
  // take() without writing the block's entry, for an owner that keeps the block's
  // references and fill itself and writes them with own() before anyone reads them
  // (PagedAllocator's sequence blocks while it keeps no entries): the entry reads what its
  // last owner left (0 or 1 references, any fill). A block never used gets its entry.
  // REQUIRES: num_free() > 0.
  BlockId take_unwritten() {
    if (free_list_.empty()) {
      const auto b = static_cast<BlockId>(meta_.size());
      meta_.push_back({.ref_count = 1, .filled = 0});  // within the capacity reserved: no move
      return b;
    }
    const BlockId b = free_list_.back();
    free_list_.pop_back();
    return b;
  }
  // Writes the entry of a block its caller holds alone: one reference, `filled` slots.
  // REQUIRES: b < used(), b owned and its entry not counted as shared.
  void own(BlockId b, std::int32_t filled) { meta_[b] = {.ref_count = 1, .filled = filled}; }
  // Asks for the free list's top, which the next take() reads (a hint; a block never used
  // needs no read).
  void prefetch_take() const {
    if (!free_list_.empty()) __builtin_prefetch(&free_list_.back());
  }
  // Returns an unreferenced block to the free list. REQUIRES: ref_count(b) == 0.
  void give_back(BlockId b) {
    meta_[b].filled = 0;
    free_list_.push_back(b);
  }
  // Drops the only reference to each block of [first, last) and returns them to the free
  // list in that order, as drop_ref and give_back each would, without touching their entries
  // (a freed sequence's blocks: each a cache line, cold in a fleet): their ref_count and
  // filled are then meaningless until take(). So a pool that uses it has no reader of a free
  // block's entry. REQUIRES: each has ref_count 1 (shared_blocks() == 0 says so of every
  // owned block), and none repeats.
  template <class BlockIt>
  void give_back_sole(BlockIt first, BlockIt last) {
    free_list_.insert(free_list_.end(), first, last);
  }

  // ref_count and filled read any block (0 for one never used); add_ref, drop_ref, set_filled
  // and give_back REQUIRE a block taken before (b < used()).
  std::int32_t ref_count(BlockId b) const { return b < used() ? meta_[b].ref_count : 0; }
  void add_ref(BlockId b) {
    if (++meta_[b].ref_count == 2) ++shared_blocks_;
  }
  // Drops one reference; returns the count left.
  std::int32_t drop_ref(BlockId b) {
    const std::int32_t left = --meta_[b].ref_count;
    if (left == 1) --shared_blocks_;
    return left;
  }
  // Blocks with more than one reference (a fork's, a prefix cache's hits).
  std::int64_t shared_blocks() const { return shared_blocks_; }

  std::int32_t filled(BlockId b) const { return b < used() ? meta_[b].filled : 0; }
  void set_filled(BlockId b, std::int32_t f) { meta_[b].filled = f; }

  // Calls f(b) for every free block: the free list from its top (the next take()), then the
  // blocks never used in ascending order. That is the order take() hands them out.
  template <class F>
  void for_each_free(F&& f) const {
    for (auto it = free_list_.rbegin(); it != free_list_.rend(); ++it) f(*it);
    for (std::int64_t b = used(); b < num_blocks_; ++b) f(static_cast<BlockId>(b));
  }

 private:
  // Both fields of a block are touched together: one cache line per block operation.
  struct BlockMeta {
    std::int32_t ref_count = 0;  // references from block tables
    std::int32_t filled = 0;     // slots holding KV, 0..block_size
  };
  std::int32_t block_size_;
  std::int64_t num_blocks_;
  std::vector<BlockMeta> meta_;     // blocks [0, used()); capacity num_blocks_ from the start
  std::vector<BlockId> free_list_;  // LIFO stack of unowned blocks that were used
  std::int64_t shared_blocks_ = 0;
};

}  // namespace pagesim::alloc

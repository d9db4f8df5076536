// KvTier: one offload tier's store of prefix-cache blocks, keyed by block hash, with its own
// EvictionPolicy.
//
// A stored block occupies one block of a BlockPool: the CPU tier borrows the paged
// allocator's CPU pool, which swapped-out sequences also use (the shared CPU budget,
// tier_stack.h); the disk tier owns a pool of capacity_blocks. A stored block is
// unreferenced in its pool (ref_count 0, filled = block size, not on the free list), as a
// cached-but-free GPU block is. Every stored block is evictable: nothing references a block
// in a tier, it is read (copied to the GPU) or dropped.
//
// Invariants (validate):
//   the index's own (block_hash_index.h): stored(b) <=> the index contains b <=> policy contains b
//   size() <= capacity_blocks;  a stored block is off the pool's free list, ref 0, full
// Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "allocator/kv_allocator.h"
#include "allocator/pool/block_hash_index.h"
#include "allocator/pool/block_pool.h"
#include "allocator/pool/eviction_policy.h"
#include "allocator/tier/tier_settings.h"

namespace pagesim::alloc {

class KvTier {
 public:
  // `shared_pool` (borrowed, must outlive the tier): the pool whose blocks the tier stores
  // into, shared with another user; null: the tier owns a pool of capacity_blocks blocks.
  // Throws AllocatorError when capacity_blocks < 1.
  KvTier(const TierSettings& settings, std::int32_t block_size, BlockPool* shared_pool);

  const TierSettings& settings() const { return settings_; }
  bool contains(BlockHash h) const { return index_.find(h) != kNoBlock; }
  std::int64_t size() const { return index_.size(); }
  // Blocks the tier could hold now: its capacity, less what the shared pool's other user
  // holds. 0 means a store must pass the block on.
  std::int64_t room() const;
  // True when pool block b holds a block of this tier.
  bool holds_block(BlockId b) const { return b >= 0 && b < pool_->num_blocks() && index_.contains(b); }

  // Stores h; when the tier is full, evicts the policy's victim first and returns its hash
  // (the caller moves it down or drops it). REQUIRES: !contains(h), room() > 0.
  std::optional<BlockHash> store(BlockHash h);
  // Forgets h and frees its block (it moved up to the GPU, or a newer copy replaced it).
  // REQUIRES: contains(h).
  void erase(BlockHash h);
  // A load read h and the tier keeps its copy: a hit for the policy (recency, frequency).
  // REQUIRES: contains(h).
  void touch(BlockHash h);
  // Evicts the policy's victim, frees its block and returns its hash. REQUIRES: size() > 0.
  BlockHash evict();

  // Calls f(hash) for every stored block, in no particular order.
  template <class F>
  void for_each_hash(F&& f) const {
    index_.for_each([&](BlockHash h, BlockId) { f(h); });
  }

  // Throws InvariantViolation naming the first identity above that is broken.
  void validate() const;

 private:
  TierSettings settings_;
  std::unique_ptr<BlockPool> own_pool_;  // null when the pool is shared
  BlockPool* pool_;
  BlockHashIndex index_;  // the stored blocks
  std::unique_ptr<EvictionPolicy> policy_;
};

}  // namespace pagesim::alloc

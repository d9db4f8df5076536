// PrefixCache: maps chained block hashes to GPU blocks holding that prefix's KV (a
// BlockHashIndex), and orders the unreferenced ones for eviction (an EvictionPolicy).
//
// A full prompt block is cached under its hash once it is filled (at admission, or by the
// append of a later prefill chunk). Cached blocks
// stay cached while referenced; when their last reference is dropped they become
// *evictable*: still reusable by a later request with the same prefix, and handed out as a
// fresh block (forgetting the hash) only when the free list is empty (or, with the paged
// allocator's single_free_queue, when it was released before every never-cached free
// block), in the order chosen by the EvictionPolicy. The cache does not own block memory: the BlockPool does.
//
// For policies that protect what the waiting queue will hit (EvictionPolicy::
// protects_pending), the cache counts, per hash, the waiting requests whose prompts hold it.
//
// Invariants (checked by validate):
//   the index's own (block_hash_index.h): lookup(h) == b  <=>  cached(b) && b holds h
//   num_evictable() == the policy's size()
//   evictable(b) => cached(b) && the pool's ref_count(b) == 0
//   protects_pending(): cached(b) => (policy's is_protected(b) <=> pending_[hash_of(b)] > 0)
// Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>

#include "allocator/allocator_stats.h"
#include "allocator/kv_allocator.h"
#include "allocator/pool/block_hash_index.h"
#include "allocator/pool/block_pool.h"
#include "allocator/pool/eviction_policy.h"

namespace pagesim::alloc {

class PrefixCache {
 public:
  PrefixCache(std::int64_t num_blocks, EvictionKind eviction);

  // The block cached under h, or kNoBlock.
  BlockId lookup(BlockHash h) const { return index_.find(h); }
  // Caches block b under h unless h is cached already; true when b was cached.
  // REQUIRES: !cached(b).
  bool add(BlockId b, BlockHash h);

  bool cached(BlockId b) const { return index_.contains(b); }
  bool evictable(BlockId b) const { return policy_->contains(b); }
  std::int64_t num_evictable() const { return evictable_; }
  std::int64_t num_cached() const { return index_.size(); }

  // b's last reference was dropped. REQUIRES: cached(b), !evictable(b).
  void make_evictable(BlockId b) {
    policy_->insert(b);
    ++evictable_;
  }
  // b is referenced again. REQUIRES: evictable(b).
  void reuse(BlockId b) {
    policy_->erase(b);
    --evictable_;
  }
  // A prompt lookup hit b (after reuse(b) if b was evictable).
  void record_hit(BlockId b) { policy_->on_hit(b); }
  // Forgets the victim's hash and returns it, unreferenced. REQUIRES: num_evictable() > 0.
  BlockId evict() {
    BlockHash forgotten;
    return evict(forgotten);
  }
  // The same, telling the victim's hash (what an offload tier stores).
  BlockId evict(BlockHash& evicted_hash);
  // The block evict() would return now. REQUIRES: num_evictable() > 0.
  BlockId next_victim() const { return policy_->peek_victim(); }

  // A request whose prompt holds `hashes` joined (hold) or left (release) the waiting
  // queue; a hash held by any waiting request protects its block. No-ops unless the
  // policy protects_pending(). O(hashes) expected, O(log n) per protection change.
  // release throws AllocatorError for a hash that no hold left pending.
  void hold_pending(std::span<const BlockHash> hashes);
  void release_pending(std::span<const BlockHash> hashes);
  // Distinct hashes some waiting request holds (0 unless the policy protects_pending()).
  std::int64_t num_pending() const { return static_cast<std::int64_t>(pending_.size()); }

  PrefixCacheStats& stats() { return stats_; }
  const PrefixCacheStats& stats() const { return stats_; }
  std::string eviction_name() const { return policy_->name(); }

  // Throws InvariantViolation if an identity above is broken.
  void validate(const BlockPool& pool) const;

 private:
  BlockHashIndex index_;  // the cached blocks
  std::unique_ptr<EvictionPolicy> policy_;
  std::int64_t evictable_ = 0;  // policy_->size(), kept here: read on every free-block count
  std::unordered_map<BlockHash, std::int32_t> pending_;  // waiting prompts holding each hash (> 0)
  PrefixCacheStats stats_;
};

}  // namespace pagesim::alloc

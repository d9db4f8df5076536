#include "allocator/pool/prefix_cache.h"

#include <string>

namespace pagesim::alloc {

PrefixCache::PrefixCache(std::int64_t num_blocks, EvictionKind eviction)
    : index_(num_blocks, /*reserve_all=*/true), policy_(make_eviction_policy(eviction, num_blocks)) {}

bool PrefixCache::add(BlockId b, BlockHash h) {
  if (!index_.insert(b, h)) return false;  // same prefix cached in another block
  policy_->on_cached(b);
  if (policy_->protects_pending() && pending_.count(h)) policy_->set_protected(b, true);
  return true;
}

void PrefixCache::hold_pending(std::span<const BlockHash> hashes) {
  if (!policy_->protects_pending()) return;
  for (BlockHash h : hashes) {
    if (++pending_[h] != 1) continue;
    if (BlockId b = lookup(h); b != kNoBlock) policy_->set_protected(b, true);
  }
}

void PrefixCache::release_pending(std::span<const BlockHash> hashes) {
  if (!policy_->protects_pending()) return;
  for (BlockHash h : hashes) {
    auto it = pending_.find(h);
    if (it == pending_.end())
      throw AllocatorError("prefix cache: released waiting-prompt hash " + std::to_string(h) +
                           " that no waiting request holds");
    if (--it->second != 0) continue;
    pending_.erase(it);
    if (BlockId b = lookup(h); b != kNoBlock) policy_->set_protected(b, false);
  }
}

BlockId PrefixCache::evict(BlockHash& evicted_hash) {
  BlockId b = policy_->pop_victim();
  --evictable_;
  evicted_hash = index_.erase(b);
  ++stats_.evictions;
  return b;
}

void PrefixCache::validate(const BlockPool& pool) const {
  index_.validate("prefix cache");
  std::int64_t n_evictable = 0;
  for (BlockId b = 0; b < static_cast<BlockId>(pool.num_blocks()); ++b) {
    if (policy_->contains(b)) {
      ++n_evictable;
      if (!cached(b))
        throw InvariantViolation("prefix cache: evictable block " + std::to_string(b) + " is not cached");
      if (pool.ref_count(b) != 0)
        throw InvariantViolation("prefix cache: evictable block " + std::to_string(b) +
                                 " has ref_count " + std::to_string(pool.ref_count(b)));
    }
    if (!cached(b)) continue;
    if (pool.filled(b) != pool.block_size())
      throw InvariantViolation("prefix cache: cached block " + std::to_string(b) + " is not full");
    const bool held = pending_.count(index_.hash_of(b)) != 0;
    if (policy_->protects_pending() && policy_->is_protected(b) != held)
      throw InvariantViolation("prefix cache: block " + std::to_string(b) + " is " +
                               (policy_->is_protected(b) ? "" : "not ") + "protected but its hash is " +
                               (held ? "" : "not ") + "held by a waiting request");
  }
  if (n_evictable != policy_->size() || evictable_ != policy_->size())
    throw InvariantViolation("prefix cache: eviction policy size " + std::to_string(policy_->size()) +
                             " disagrees with its " + std::to_string(n_evictable) + " members or the count " +
                             std::to_string(evictable_));
}

}  // namespace pagesim::alloc

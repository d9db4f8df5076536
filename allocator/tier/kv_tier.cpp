#include "allocator/tier/kv_tier.h"

#include <algorithm>
#include <cassert>
#include <string>

namespace pagesim::alloc {
namespace {

[[noreturn]] void broken(const KvTier& t, const std::string& what) {
  throw InvariantViolation(std::string(to_string(t.settings().kind)) + " tier: " + what);
}

}  // namespace

KvTier::KvTier(const TierSettings& settings, std::int32_t block_size, BlockPool* shared_pool)
    : settings_(settings) {
  if (settings.capacity_blocks < 1)
    throw AllocatorError(std::string(to_string(settings.kind)) + " tier: capacity_blocks must be >= 1, got " +
                         std::to_string(settings.capacity_blocks));
  if (!shared_pool) own_pool_ = std::make_unique<BlockPool>(settings.capacity_blocks, block_size);
  pool_ = shared_pool ? shared_pool : own_pool_.get();
  hash_of_.assign(static_cast<std::size_t>(pool_->num_blocks()), 0);
  stored_.assign(static_cast<std::size_t>(pool_->num_blocks()), false);
  policy_ = make_eviction_policy(settings.eviction, pool_->num_blocks());
}

std::int64_t KvTier::room() const { return std::min(settings_.capacity_blocks, size() + pool_->num_free()); }

std::optional<BlockHash> KvTier::store(BlockHash h) {
  assert(!contains(h) && room() > 0);
  std::optional<BlockHash> victim;
  if (size() >= room()) victim = evict();
  const BlockId b = pool_->take();
  pool_->drop_ref(b);  // unreferenced, like a cached-but-free GPU block
  pool_->set_filled(b, pool_->block_size());
  by_hash_.emplace(h, b);
  hash_of_[b] = h;
  stored_[b] = true;
  policy_->on_cached(b);
  policy_->insert(b);
  return victim;
}

void KvTier::free_block(BlockId b) {
  stored_[b] = false;
  pool_->give_back(b);
}

void KvTier::erase(BlockHash h) {
  auto it = by_hash_.find(h);
  assert(it != by_hash_.end());
  const BlockId b = it->second;
  by_hash_.erase(it);
  policy_->erase(b);
  free_block(b);
}

void KvTier::touch(BlockHash h) {
  const BlockId b = by_hash_.at(h);
  policy_->erase(b);
  policy_->on_hit(b);
  policy_->insert(b);
}

BlockHash KvTier::evict() {
  assert(size() > 0);
  const BlockId b = policy_->pop_victim();
  const BlockHash h = hash_of_[b];
  by_hash_.erase(h);
  free_block(b);
  return h;
}

void KvTier::validate() const {
  if (size() > settings_.capacity_blocks)
    broken(*this, "holds " + std::to_string(size()) + " blocks, capacity is " + std::to_string(settings_.capacity_blocks));
  std::vector<bool> on_free(stored_.size(), false);
  for (BlockId b : pool_->free_list()) on_free[static_cast<std::size_t>(b)] = true;
  std::int64_t n = 0;
  for (BlockId b = 0; b < static_cast<BlockId>(stored_.size()); ++b) {
    if (policy_->contains(b) != stored_[b])
      broken(*this, "block " + std::to_string(b) + (stored_[b] ? " is stored but not in" : " is in") +
                        " the eviction policy" + (stored_[b] ? "" : " but not stored"));
    if (!stored_[b]) continue;
    ++n;
    auto it = by_hash_.find(hash_of_[b]);
    if (it == by_hash_.end() || it->second != b) broken(*this, "block " + std::to_string(b) + " is not indexed by its hash");
    if (on_free[static_cast<std::size_t>(b)]) broken(*this, "stored block " + std::to_string(b) + " is on the free list");
    if (pool_->ref_count(b) != 0 || pool_->filled(b) != pool_->block_size())
      broken(*this, "stored block " + std::to_string(b) + " has ref_count " + std::to_string(pool_->ref_count(b)) +
                        " and filled " + std::to_string(pool_->filled(b)) + "; expected 0 and a full block");
  }
  if (n != size()) broken(*this, "hash index has " + std::to_string(size()) + " entries but " + std::to_string(n) + " blocks are stored");
}

}  // namespace pagesim::alloc

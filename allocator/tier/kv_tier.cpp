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
  index_ = BlockHashIndex(pool_->num_blocks());
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
  [[maybe_unused]] const bool added = index_.insert(b, h);
  assert(added && "REQUIRES: !contains(h)");
  policy_->on_cached(b);
  policy_->insert(b);
  return victim;
}

void KvTier::erase(BlockHash h) {
  const BlockId b = index_.find(h);
  assert(b != kNoBlock);
  index_.erase(b);
  policy_->erase(b);
  pool_->give_back(b);
}

void KvTier::touch(BlockHash h) {
  const BlockId b = index_.find(h);
  assert(b != kNoBlock);
  policy_->erase(b);
  policy_->on_hit(b);
  policy_->insert(b);
}

BlockHash KvTier::evict() {
  assert(size() > 0);
  const BlockId b = policy_->pop_victim();
  const BlockHash h = index_.erase(b);
  pool_->give_back(b);
  return h;
}

void KvTier::validate() const {
  if (size() > settings_.capacity_blocks)
    broken(*this, "holds " + std::to_string(size()) + " blocks, capacity is " + std::to_string(settings_.capacity_blocks));
  index_.validate(std::string(to_string(settings_.kind)) + " tier");
  std::vector<bool> on_free(static_cast<std::size_t>(pool_->num_blocks()), false);
  pool_->for_each_free([&](BlockId b) { on_free[static_cast<std::size_t>(b)] = true; });
  for (BlockId b = 0; b < static_cast<BlockId>(pool_->num_blocks()); ++b) {
    const bool stored = index_.contains(b);
    if (policy_->contains(b) != stored)
      broken(*this, "block " + std::to_string(b) + (stored ? " is stored but not in" : " is in") +
                        " the eviction policy" + (stored ? "" : " but not stored"));
    if (!stored) continue;
    if (on_free[static_cast<std::size_t>(b)]) broken(*this, "stored block " + std::to_string(b) + " is on the free list");
    if (pool_->ref_count(b) != 0 || pool_->filled(b) != pool_->block_size())
      broken(*this, "stored block " + std::to_string(b) + " has ref_count " + std::to_string(pool_->ref_count(b)) +
                        " and filled " + std::to_string(pool_->filled(b)) + "; expected 0 and a full block");
  }
}

}  // namespace pagesim::alloc

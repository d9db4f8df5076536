#include "sim/analysis/ideal_block_cache.h"

#include <cassert>

namespace pagesim::sim {

IdealBlockCache::IdealBlockCache(IdealPolicy policy, std::int64_t capacity_blocks)
    : policy_(policy), capacity_(capacity_blocks) {
  assert(capacity_blocks >= 0);
}

IdealBlockCache::Rank IdealBlockCache::rank_of(alloc::BlockHash key, const Entry& e) const {
  switch (policy_) {
    case IdealPolicy::kLru: return {e.last_use, 0, key};
    case IdealPolicy::kFifo: return {e.inserted, 0, key};
    case IdealPolicy::kLfu: return {e.uses, e.last_use, key};
  }
  return {0, 0, key};
}

std::size_t IdealBlockCache::lookup_then_use(std::span<const PromptBlock> blocks) {
  std::size_t hits = 0;
  while (hits < blocks.size() && entries_.count(blocks[hits].key)) ++hits;
  for (const PromptBlock& b : blocks) use(b.key);
  assert(static_cast<std::int64_t>(order_.size()) == cached_blocks() && cached_blocks() <= capacity_);
  return hits;
}

void IdealBlockCache::use(alloc::BlockHash key) {
  const std::int64_t now = ++clock_;
  if (auto it = entries_.find(key); it != entries_.end()) {
    order_.erase(rank_of(key, it->second));
    it->second.last_use = now;
    ++it->second.uses;
    order_.insert(rank_of(key, it->second));
    return;
  }
  if (capacity_ == 0) return;
  if (cached_blocks() == capacity_) {
    const auto victim = order_.begin();
    entries_.erase(std::get<2>(*victim));
    order_.erase(victim);
  }
  const Entry e{now, now, 1};
  entries_.emplace(key, e);
  order_.insert(rank_of(key, e));
}

}  // namespace pagesim::sim

#include "sim/cluster/global_cache.h"

#include <cassert>

namespace pagesim::sim {

GlobalCache::GlobalCache(const GlobalCacheSettings& settings, std::span<const Replica> serving) : settings_(settings) {
  assert(settings_.enabled);
  if (settings_.source == GlobalCacheSource::kSharedPool) {
    pool_.emplace(settings_.pool_blocks);
    return;
  }
  peers_.reserve(serving.size());
  for (const Replica& p : serving) peers_.emplace_back(serving, p.index());
}

const alloc::RemotePrefixSource& GlobalCache::source_for(std::int32_t replica) const {
  if (pool_) return *pool_;
  return peers_[static_cast<std::size_t>(replica)];
}

bool GlobalCache::PeerView::holds(alloc::BlockHash h) const {
  for (const Replica& p : serving_)
    if (p.index() != self_ && p.cached_prefix_tokens(std::span<const alloc::BlockHash>(&h, 1)) > 0) return true;
  return false;
}

}  // namespace pagesim::sim

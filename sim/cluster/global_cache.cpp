#include "sim/cluster/global_cache.h"

#include <algorithm>
#include <cassert>

namespace pagesim::sim {

GlobalCache::GlobalCache(const GlobalCacheSettings& settings, double kv_bytes_per_token, std::int64_t pool_block_size,
                         std::span<const Replica> serving)
    : settings_(settings), kv_bytes_per_token_(kv_bytes_per_token) {
  assert(settings_.enabled && settings_.bandwidth_gbps > 0 && kv_bytes_per_token_ > 0 && settings_.latency_us >= 0);
  if (settings_.source == GlobalCacheSource::kSharedPool) {
    const double blocks = settings_.shared_pool_blocks(pool_block_size, kv_bytes_per_token_);
    assert(blocks >= 1);
    pool_.emplace(std::max<std::int64_t>(1, static_cast<std::int64_t>(blocks)));
    return;
  }
  peers_.reserve(serving.size());
  for (const Replica& replica : serving) peers_.emplace_back(serving, replica.index());
}

const alloc::RemotePrefixSource& GlobalCache::source_for(std::int32_t replica) const {
  if (pool_) return *pool_;
  return peers_[static_cast<std::size_t>(replica)];
}

bool GlobalCache::PeerView::holds(alloc::BlockHash h) const {
  for (const Replica& replica : serving_)
    if (replica.index() != self_ && replica.cached_prefix_tokens(std::span<const alloc::BlockHash>(&h, 1)) > 0) return true;
  return false;
}

}  // namespace pagesim::sim

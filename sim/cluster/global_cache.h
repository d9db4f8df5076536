// GlobalCache: the remote prefix source each serving replica of a cluster fetches from
// (GlobalCacheSettings says what is fetched, from where and at what price).
//
// peers: replica R's source holds a block when any other serving replica holds it now, in
// its GPU prefix cache or its offload tiers (Replica::cached_prefix_tokens of that one block);
// R's own cache is never asked (its allocator has looked there first). shared_pool: every
// replica's source is the one SharedPrefixPool, written by on_prefill_complete.
//
// Owned by a Simulation; borrows the replicas, which must outlive it and never move (the
// Simulation's replica vector is fixed at construction). Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "allocator/remote_prefix.h"
#include "sim/cluster/global_cache_settings.h"
#include "sim/cluster/replica.h"
#include "sim/cluster/shared_prefix_pool.h"

namespace pagesim::sim {

class GlobalCache {
 public:
  // `serving`: the replicas that admit arriving requests (all, or the prefill replicas of a
  // disaggregated cluster); kv_bytes_per_token: the model's (a fetched block moves the whole
  // model's KV of its tokens); pool_block_size: the tokens of a shared-pool block (the
  // experiment's allocator.block_size). REQUIRES: settings.enabled, bandwidth_gbps and
  // kv_bytes_per_token > 0, latency_us >= 0, and for shared_pool at least one block
  // (shared_pool_blocks >= 1; the run checks them).
  GlobalCache(const GlobalCacheSettings& settings, double kv_bytes_per_token, std::int64_t pool_block_size,
              std::span<const Replica> serving);

  const GlobalCacheSettings& settings() const { return settings_; }
  // Seconds and bytes of fetching `blocks` blocks of `block_size` tokens in one iteration.
  double fetch_seconds(std::int64_t blocks, std::int64_t block_size) const {
    return settings_.fetch_seconds(blocks, block_size, kv_bytes_per_token_);
  }
  double fetch_bytes(std::int64_t blocks, std::int64_t block_size) const {
    return GlobalCacheSettings::fetch_bytes(blocks, block_size, kv_bytes_per_token_);
  }
  // The source serving replica `replica` fetches from; valid as long as this object.
  // REQUIRES: replica < |serving|.
  const alloc::RemotePrefixSource& source_for(std::int32_t replica) const;
  // A prefill of a prompt with these full-block keys completed: the shared pool stores them
  // (nothing to do for peers, whose caches already hold them).
  void on_prefill_complete(std::span<const alloc::BlockHash> hashes) {
    if (pool_) pool_->write(hashes);
  }
  // The shared pool; null for peers.
  const SharedPrefixPool* pool() const { return pool_ ? &*pool_ : nullptr; }

 private:
  class PeerView final : public alloc::RemotePrefixSource {
   public:
    PeerView(std::span<const Replica> serving, std::int32_t self) : serving_(serving), self_(self) {}
    bool holds(alloc::BlockHash h) const override;

   private:
    std::span<const Replica> serving_;
    std::int32_t self_;
  };

  GlobalCacheSettings settings_;
  double kv_bytes_per_token_;
  std::vector<PeerView> peers_;             // peers: one per serving replica
  std::optional<SharedPrefixPool> pool_;    // shared_pool
};

}  // namespace pagesim::sim

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
  // disaggregated cluster). REQUIRES: settings.enabled, and pool_blocks >= 1 for shared_pool.
  GlobalCache(const GlobalCacheSettings& settings, std::span<const Replica> serving);

  const GlobalCacheSettings& settings() const { return settings_; }
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
  std::vector<PeerView> peers_;             // peers: one per serving replica
  std::optional<SharedPrefixPool> pool_;    // shared_pool
};

}  // namespace pagesim::sim

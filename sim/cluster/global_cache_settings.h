// GlobalCacheSettings: whether a cluster's replicas may fetch prefix blocks they lack from
// elsewhere in the cluster (a global KV cache, as Mooncake Store is: Qin et al., "Mooncake:
// A KVCache-centric Disaggregated Architecture", FAST 2025), and what a fetch costs.
//
// Without it (the default) each replica's prefix cache is its own. With it, a request
// admitted on replica R hits the leading prompt blocks R holds (GPU and offload tiers) as
// always, and each block after those that R lacks but the global cache holds is fetched:
// copied into a fresh GPU block of R and cached there (the source keeps its copy), instead of
// being computed. The lookup goes on block by block until a block neither R nor the global
// cache holds. Where the global cache looks (GlobalCacheSource):
//   peers        another serving replica's prefix cache (its GPU cache or its offload tiers)
//   shared_pool  one cluster-wide CPU pool of shared_pool_blocks() blocks: every completed prefill
//                writes its prompt's full blocks into it (LRU by last write; the pool is
//                separate from the replicas' own memory)
// An iteration that fetched b blocks takes
//     latency_us · 10^-6 + b × block_size × kv_bytes_per_token / (bandwidth_gbps · 10^9 / 8)
// longer, serially before its compute (the fetched KV is read before the prefill that
// needs it), so a request's time-to-first-token includes its fetch.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <utility>

namespace pagesim::sim {

enum class GlobalCacheSource { kPeers, kSharedPool };

inline constexpr std::array<std::pair<GlobalCacheSource, std::string_view>, 2> kGlobalCacheSourceNames = {{
    {GlobalCacheSource::kPeers, "peers"},
    {GlobalCacheSource::kSharedPool, "shared_pool"},
}};

// The struct is the config section replicas.global_cache itself, in its units
// (experiment_fields.cpp reads and writes it); the model's KV bytes per token and the block
// size come from the run.
struct GlobalCacheSettings {
  bool enabled = false;                  // the section is given; false: local caches only
  GlobalCacheSource source = GlobalCacheSource::kPeers;
  double bandwidth_gbps = 0;             // network bandwidth, gigabits (10^9 bits) per second, > 0 when enabled
  double latency_us = 0;                 // fixed cost of an iteration's fetch, microseconds, >= 0
  double shared_pool_gib = 0;            // shared_pool: the pool's capacity, GiB (2^30 bytes), > 0

  // Seconds to fetch `blocks` blocks of `block_size` tokens in one iteration (0 for none).
  double fetch_seconds(std::int64_t blocks, std::int64_t block_size, double kv_bytes_per_token) const {
    if (blocks == 0) return 0;
    return latency_us * 1e-6 + fetch_bytes(blocks, block_size, kv_bytes_per_token) / (bandwidth_gbps * 1e9 / 8);
  }
  static double fetch_bytes(std::int64_t blocks, std::int64_t block_size, double kv_bytes_per_token) {
    return static_cast<double>(blocks * block_size) * kv_bytes_per_token;
  }
  // shared_pool: how many blocks of `block_size` tokens the pool holds (a fraction; the pool
  // keeps its whole part, and needs at least one).
  double shared_pool_blocks(std::int64_t block_size, double kv_bytes_per_token) const {
    return shared_pool_gib * 1073741824.0 / (kv_bytes_per_token * static_cast<double>(block_size));
  }
};

}  // namespace pagesim::sim

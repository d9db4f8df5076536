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
//   shared_pool  one cluster-wide CPU pool of pool_blocks blocks: every completed prefill
//                writes its prompt's full blocks into it (LRU by last write; the pool is
//                separate from the replicas' own memory)
// An iteration that fetched b blocks takes
//     latency_s + b × block_size × kv_bytes_per_token / bytes_per_s
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

struct GlobalCacheSettings {
  bool enabled = false;                             // false: local caches only
  GlobalCacheSource source = GlobalCacheSource::kPeers;
  double bytes_per_s = 0;                           // network bandwidth, > 0 when enabled
  double latency_s = 0;                             // fixed cost of an iteration's fetch, >= 0
  double kv_bytes_per_token = 0;                    // the model's KV bytes per token, > 0 when enabled
  std::int64_t pool_blocks = 0;                     // shared_pool: its capacity in blocks, >= 1

  // Seconds to fetch `blocks` blocks of `block_size` tokens in one iteration (0 for none).
  double fetch_seconds(std::int64_t blocks, std::int64_t block_size) const {
    if (blocks == 0) return 0;
    return latency_s + fetch_bytes(blocks, block_size) / bytes_per_s;
  }
  double fetch_bytes(std::int64_t blocks, std::int64_t block_size) const {
    return static_cast<double>(blocks * block_size) * kv_bytes_per_token;
  }
};

}  // namespace pagesim::sim

// OffloadConfig: the `allocator.offload` section of an experiment — KV offload tiers below
// the GPU prefix cache, in the units a user writes (GiB, GB/s, µs) — and its checks and
// conversion into the allocator's OffloadSettings (allocator/tier/tier_settings.h).
//
//   allocator:
//     prefix_cache: true
//     cpu_swap_gib: 64            # the CPU budget, shared by swapping and the CPU tier
//     offload:
//       write_policy: write_back  # or write_through
//       overlap: false            # loads and stores before the pass (sum), or beside it (max)
//       tiers:
//         - {kind: cpu, capacity_gib: 32, read_gbps: 25, write_gbps: 25, latency_us: 10, eviction: lru}
//         - {kind: disk, capacity_gib: 512, read_gbps: 5, write_gbps: 2, latency_us: 100, eviction: lru}
//
// GiB are 2^30 bytes, GB/s 10^9 bytes per second. Plain values.
#pragma once

#include <vector>

#include "allocator/pool/eviction_policy.h"
#include "allocator/tier/tier_settings.h"
#include "sim/config/config_origin.h"

namespace pagesim::sim {

struct TierConfig {
  alloc::TierKind kind = alloc::TierKind::kCpu;
  double capacity_gib = 0;   // > 0; a CPU tier at most allocator.cpu_swap_gib (shared)
  double read_gbps = 25;     // tier -> GPU; 25: PCIe 4.0 x16 host memory, roughly
  double write_gbps = 25;    // into the tier
  double latency_us = 10;    // fixed cost per batched transfer (per tier, direction, iteration)
  alloc::EvictionKind eviction = alloc::EvictionKind::kLru;
};

struct OffloadConfig {
  std::vector<TierConfig> tiers;  // top first: cpu, then disk; empty: no offloading
  alloc::TierWritePolicy write_policy = alloc::TierWritePolicy::kWriteBack;
  bool overlap = false;           // false: serial (LMCache's default bulk load), see README

  bool at_default() const {
    return tiers.empty() && write_policy == alloc::TierWritePolicy::kWriteBack && !overlap;
  }
};

// Checks allocator.offload against itself and the allocator settings around it; throws
// ConfigError at the offending key (allocator.offload.tiers[i].<key>, or allocator.offload
// when the section is given but means nothing: no tier, no prefix cache, not paged).
void check_offload(const OffloadConfig& offload, bool paged, bool prefix_cache, double cpu_swap_gib,
                   const ConfigOrigin& origin);

// The allocator's settings for blocks of `bytes_per_block` KV bytes. Throws ConfigError at
// allocator.offload.tiers[i].capacity_gib when a tier holds no block or more blocks than
// the allocator can number (max_blocks).
alloc::OffloadSettings offload_settings(const OffloadConfig& offload, double bytes_per_block, std::int64_t max_blocks,
                                        const ConfigOrigin& origin);

}  // namespace pagesim::sim

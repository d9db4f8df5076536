// Tier settings: the KV offload tiers below a GPU prefix cache, as plain values.
//
// A tier is a store of prefix-cache blocks in slower, larger memory: host DRAM (`cpu`) or a
// local SSD (`disk`), at most one of each, the CPU tier above the disk tier. Blocks the GPU
// prefix cache evicts are written down (write_back) or every block it caches is written at
// once (write_through); a prompt whose prefix is found in a tier loads those blocks back
// before its prefill. What a transfer costs is priced from the link settings here by
// TierStack::take_transfer (tier_stack.h); the engine decides how that time meets compute
// (`overlap`).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "allocator/pool/eviction_policy.h"

namespace pagesim::alloc {

enum class TierKind { kCpu, kDisk };

inline constexpr std::array<std::pair<TierKind, std::string_view>, 2> kTierKindNames = {{
    {TierKind::kCpu, "cpu"},
    {TierKind::kDisk, "disk"},
}};

constexpr std::string_view to_string(TierKind kind) {
  for (const auto& [k, name] : kTierKindNames)
    if (k == kind) return name;
  return "?";
}

// When a GPU-cached block is written to the first tier.
enum class TierWritePolicy {
  // When the GPU prefix cache evicts it (the copy moves down; a load moves it back up, so a
  // block lives in exactly one place: the GPU cache or one tier).
  kWriteBack,
  // As soon as the GPU caches it (the first tier keeps a copy while the GPU holds the block;
  // an eviction from the GPU then writes nothing, and a load leaves the tier's copy).
  kWriteThrough,
};

inline constexpr std::array<std::pair<TierWritePolicy, std::string_view>, 2> kTierWritePolicyNames = {{
    {TierWritePolicy::kWriteBack, "write_back"},
    {TierWritePolicy::kWriteThrough, "write_through"},
}};

constexpr std::string_view to_string(TierWritePolicy p) {
  for (const auto& [k, name] : kTierWritePolicyNames)
    if (k == p) return name;
  return "?";
}

struct TierSettings {
  TierKind kind = TierKind::kCpu;
  std::int64_t capacity_blocks = 0;  // blocks the tier may hold (> 0); the CPU tier shares
                                     // its memory with the swap pool (tier_stack.h)
  double read_bytes_per_s = 25e9;    // tier -> GPU (a load)
  double write_bytes_per_s = 25e9;   // GPU or upper tier -> this tier (a store)
  double latency_s = 10e-6;          // fixed cost of each batched transfer (one per tier and
                                     // direction in an iteration that moves any block)
  EvictionKind eviction = EvictionKind::kLru;  // which stored block leaves when full
};

struct OffloadSettings {
  std::vector<TierSettings> tiers;  // top (nearest the GPU) first; empty: no offloading
  TierWritePolicy write_policy = TierWritePolicy::kWriteBack;
  // true: an iteration's transfers run beside its compute (it takes the longer of the two:
  // layer-wise pipelined loads); false: before it (the sum: a bulk load, then the pass).
  bool overlap = false;
  double bytes_per_block = 0;  // KV bytes of one block (all layers), > 0 when tiers are set
};

}  // namespace pagesim::alloc

// Offload-tier records: what a run with allocator.offload tiers reports beyond a prefix-cache
// run — extra columns of iterations.csv (TierIterationSample, after the prefix-cache ones)
// and the "tiers" object of summary.json (TierSummary). Written only when tiers are
// configured, so every other run's outputs keep their bytes. Plain values, each with its
// field list (record_fields.h).
//
// Hit tokens count first admissions, as the prefix cache's hit rate does, split by where
// each hit block was found: the GPU pool, the CPU tier or the disk tier (gpu + cpu + disk
// == prefix_cache.hit_tokens). Bytes are blocks moved × KV bytes per block.
#pragma once

#include <cstdint>
#include <tuple>

#include "sim/output/record_fields.h"

namespace pagesim::sim {

// Columns appended to an iterations.csv row: what this iteration's scheduling did (counts
// since the previous row of the same replica, as PrefixIterationSample's).
struct TierIterationSample {
  std::int64_t gpu_hit_tokens = 0;   // first admissions' prompt tokens found on the GPU
  std::int64_t cpu_hit_tokens = 0;   // ... loaded from the CPU tier
  std::int64_t disk_hit_tokens = 0;  // ... loaded from the disk tier
  double cpu_read_bytes = 0;         // CPU tier -> GPU
  double cpu_write_bytes = 0;        // into the CPU tier
  double disk_read_bytes = 0;
  double disk_write_bytes = 0;
  double tier_transfer_s = 0;        // TierCost (sim/core/tier_cost.h) of this iteration
  double tier_added_s = 0;
  double prefill_saved_s = 0;
};

template <>
struct RecordFields<TierIterationSample> {
  using S = TierIterationSample;
  static constexpr auto fields = std::tuple{
      Field{"gpu_hit_tokens", &S::gpu_hit_tokens},
      Field{"cpu_hit_tokens", &S::cpu_hit_tokens},
      Field{"disk_hit_tokens", &S::disk_hit_tokens},
      Field{"cpu_read_bytes", &S::cpu_read_bytes},
      Field{"cpu_write_bytes", &S::cpu_write_bytes},
      Field{"disk_read_bytes", &S::disk_read_bytes},
      Field{"disk_write_bytes", &S::disk_write_bytes},
      Field{"tier_transfer_s", &S::tier_transfer_s},
      Field{"tier_added_s", &S::tier_added_s},
      Field{"prefill_saved_s", &S::prefill_saved_s},
  };
};
static_assert(lists_every_member<TierIterationSample>());

// One tier over the whole run (zeros for a kind not configured).
struct TierLevelSummary {
  std::int64_t hit_tokens = 0;      // first admissions' prompt tokens loaded from it
  double hit_rate = 0;              // hit_tokens / first admissions' prompt tokens
  std::int64_t readmission_hit_tokens = 0;  // loaded for re-admitted requests
  double read_bytes = 0;            // loads into the GPU
  double write_bytes = 0;           // stores into it
  std::int64_t loaded_blocks = 0;
  std::int64_t stored_blocks = 0;
  std::int64_t evicted_blocks = 0;  // pushed out by its eviction policy (down, or dropped)
};

template <>
struct RecordFields<TierLevelSummary> {
  using S = TierLevelSummary;
  static constexpr auto fields = std::tuple{
      Field{"hit_tokens", &S::hit_tokens},
      Field{"hit_rate", &S::hit_rate},
      Field{"readmission_hit_tokens", &S::readmission_hit_tokens},
      Field{"read_bytes", &S::read_bytes},
      Field{"write_bytes", &S::write_bytes},
      Field{"loaded_blocks", &S::loaded_blocks},
      Field{"stored_blocks", &S::stored_blocks},
      Field{"evicted_blocks", &S::evicted_blocks},
  };
};
static_assert(lists_every_member<TierLevelSummary>());

// summary.json's "tiers" object, summed over replicas.
struct TierSummary {
  std::int64_t gpu_hit_tokens = 0;  // first admissions' prompt tokens found on the GPU
  double gpu_hit_rate = 0;          // gpu_hit_tokens / their prompt tokens
  TierLevelSummary cpu;
  TierLevelSummary disk;
  std::int64_t dropped_blocks = 0;  // fell off the last tier (or found no tier with room)
  double transfer_s = 0;            // Σ TierCost::transfer_s over iterations
  double added_s = 0;               // Σ TierCost::added_s: time the tiers added
  double prefill_saved_s = 0;       // Σ TierCost::prefill_saved_s: net prefill time saved
};

template <>
struct RecordFields<TierSummary> {
  using S = TierSummary;
  static constexpr auto fields = std::tuple{
      Field{"gpu_hit_tokens", &S::gpu_hit_tokens},
      Field{"gpu_hit_rate", &S::gpu_hit_rate},
      Field{"cpu", &S::cpu},
      Field{"disk", &S::disk},
      Field{"dropped_blocks", &S::dropped_blocks},
      Field{"transfer_s", &S::transfer_s},
      Field{"added_s", &S::added_s},
      Field{"prefill_saved_s", &S::prefill_saved_s},
  };
};
static_assert(lists_every_member<TierSummary>());

}  // namespace pagesim::sim

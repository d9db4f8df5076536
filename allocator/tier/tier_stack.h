// TierStack: the offload tiers below a GPU prefix cache — where the blocks the GPU evicts go,
// where a prompt's prefix is looked up after the GPU, and what moving blocks costs.
//
// Tiers are ordered top (nearest the GPU) first: at most one CPU tier, then at most one
// disk tier. A block enters the top tier that has room (write_back: when the GPU prefix
// cache evicts it; write_through: when the GPU caches it); a tier's eviction victim moves
// to the tier below and leaves the last one (dropped). A prompt block found in a tier is
// loaded into a fresh GPU block at admission (write_back: it leaves the tier; write_through:
// the tier keeps its copy). A load completes within the iteration that admits the request
// (the engine charges its time there), so no block is ever in flight between iterations.
//
// The CPU budget: the CPU tier stores into the paged allocator's CPU pool
// (allocator.cpu_swap_gib), which swap preemption also uses. Each CPU block holds either a
// swapped-out sequence's block or a tier block, never both; swapping has priority (a
// swap-out that finds the pool full evicts CPU-tier blocks down, reclaim_cpu), and the tier
// holds at most its own capacity_blocks. So swapped + tier + free CPU blocks == the pool.
//
// Invariants (validate):
//   each tier's own (kv_tier.h); a hash is stored in at most one tier
//   write_back: no hash is both cached on the GPU and stored in a tier (checked by the
//   paged allocator, which knows the GPU cache), and
//   GPU-cached + Σ stored + dropped + superseded == cached_count - loads (nothing lost)
// Not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "allocator/kv_allocator.h"
#include "allocator/pool/block_pool.h"
#include "allocator/tier/kv_tier.h"
#include "allocator/tier/tier_settings.h"
#include "allocator/tier_transfer.h"

namespace pagesim::alloc {

// Monotonic counters of one tier since construction.
struct TierCounters {
  std::int64_t hit_tokens = 0;              // first admissions' prompt tokens loaded from it
  std::int64_t readmission_hit_tokens = 0;  // the same for re-admissions after preemption
  std::int64_t loaded_blocks = 0;           // blocks read into the GPU pool
  std::int64_t stored_blocks = 0;           // blocks written into it
  std::int64_t evicted_blocks = 0;          // blocks its eviction policy pushed out
};

class TierStack {
 public:
  // `cpu_pool`: the paged allocator's CPU (swap) pool, which the CPU tier shares. Throws
  // AllocatorError on an empty tier list, more than one tier of a kind, a disk tier above
  // a CPU tier, a capacity < 1, a CPU tier larger than the CPU pool, a bandwidth <= 0, a
  // latency < 0, bytes_per_block <= 0 or an eviction policy that needs a waiting queue.
  TierStack(const OffloadSettings& settings, std::int32_t block_size, BlockPool& cpu_pool);

  const OffloadSettings& settings() const { return settings_; }
  std::int32_t num_tiers() const { return static_cast<std::int32_t>(tiers_.size()); }
  const KvTier& tier(std::int32_t t) const { return tiers_[static_cast<std::size_t>(t)]; }
  const TierCounters& counters(std::int32_t t) const { return counters_[static_cast<std::size_t>(t)]; }
  // Blocks dropped off the last tier, and lower copies discarded because the GPU cached a
  // newer one (write_back), since construction.
  std::int64_t dropped_blocks() const { return dropped_; }
  std::int64_t superseded_blocks() const { return superseded_; }
  // GPU cachings reported by on_gpu_cached since construction (for the identity above).
  std::int64_t cached_count() const { return cached_count_; }

  // The tier storing h, or -1. O(tiers).
  std::int32_t find(BlockHash h) const;

  // The GPU prefix cache cached h (a computed or a loaded block).
  void on_gpu_cached(BlockHash h);
  // The GPU prefix cache evicted h to reuse its block.
  void on_gpu_evicted(BlockHash h);
  // Prompt block h, found in tier t, is loaded into the GPU pool now; `tokens` of the
  // request's cached tokens come from it. REQUIRES: find(h) == t.
  void load(BlockHash h, std::int32_t t, std::int64_t tokens, bool readmission);

  // CPU blocks reclaim_cpu could free for swapping: what the CPU tier stores (0 without).
  std::int64_t cpu_reclaimable() const;
  // Evicts n blocks from the CPU tier (each moves down or is dropped) so that swap-out can
  // use their CPU blocks. REQUIRES: n <= cpu_reclaimable().
  void reclaim_cpu(std::int64_t n);
  // True when CPU pool block b holds a CPU-tier block.
  bool holds_cpu_block(BlockId b) const { return cpu_ >= 0 && tier(cpu_).holds_block(b); }

  // Prices the transfers that touch GPU memory since the last call and forgets them: loads
  // into the GPU and stores of GPU blocks (the first tier a block from the GPU lands in).
  // Per tier that moved blocks, latency + blocks × bytes_per_block / bandwidth for each
  // direction, summed. Moves between tiers (a victim going down, a CPU block reclaimed for
  // swap) are the host's background work: counted in counters(), never charged to the GPU.
  TierTransfer take_transfer();

  // Throws InvariantViolation when an identity above (except the GPU's) is broken.
  void validate() const;

 private:
  // Stores h in tier t or, when t has no room, the first tier below with room; a victim
  // moves on down; what leaves the last tier is dropped. `from_gpu`: h comes from GPU
  // memory (its first store is charged by take_transfer).
  void put(std::size_t t, BlockHash h, bool from_gpu);

  struct Pending {  // GPU-side blocks moved since the last take_transfer
    std::int64_t reads = 0, writes = 0;
  };

  OffloadSettings settings_;
  std::vector<KvTier> tiers_;
  std::vector<TierCounters> counters_;
  std::vector<Pending> pending_;
  std::int32_t cpu_ = -1;  // index of the CPU tier, -1 without
  std::int64_t dropped_ = 0, superseded_ = 0, cached_count_ = 0;
};

}  // namespace pagesim::alloc

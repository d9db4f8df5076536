// AllocatorStats: one record of an allocator's block and prefix-cache statistics.
//
// Levels (what holds now) are kept apart from monotonic counters (since construction), as
// in STYLE rule 8. Fields that a policy has no notion of stay 0: contiguous ranges share no
// blocks and cache no prefixes, so all of their fields are 0.
#pragma once

#include <cstdint>

namespace pagesim::alloc {

// Monotonic prefix-cache counters since construction. A request's first admission and its
// re-admissions after recompute preemptions are counted apart: a re-admitted request mostly
// finds the blocks it held itself, which says nothing about sharing between requests.
struct PrefixCacheStats {
  // First admissions.
  std::int64_t prompt_tokens = 0;  // every prompt token of every first-admitted request (those
                                   // without hashes, or shorter than a block, included; KV
                                   // received from another replica is no admission)
  std::int64_t hit_tokens = 0;     // of those, tokens whose KV was found in the cache
  std::int64_t hit_blocks = 0;     // cached blocks reused at first admission
  std::int64_t miss_blocks = 0;    // hashed prompt blocks not found then (computed and cached)
  // Re-admissions after recompute preemptions.
  std::int64_t readmission_hit_tokens = 0;  // tokens found in the cache, first-admission
                                            // tokens not included
  // Blocks.
  std::int64_t evictions = 0;      // evictable blocks handed out as fresh blocks

  // Adds another cache's counters (a cluster's replicas summed).
  PrefixCacheStats& operator+=(const PrefixCacheStats& o) {
    prompt_tokens += o.prompt_tokens;
    hit_tokens += o.hit_tokens;
    hit_blocks += o.hit_blocks;
    miss_blocks += o.miss_blocks;
    readmission_hit_tokens += o.readmission_hit_tokens;
    evictions += o.evictions;
    return *this;
  }

  // hit_tokens / prompt_tokens, 0 before any admission.
  double hit_rate() const {
    return prompt_tokens ? static_cast<double>(hit_tokens) / static_cast<double>(prompt_tokens) : 0.0;
  }
};

struct AllocatorStats {
  // Levels, now.
  std::int64_t logical_blocks = 0;   // Σ block-table lengths of GPU-resident sequences (a
                                     // shared block counts once per table that holds it)
  std::int64_t physical_blocks = 0;  // distinct GPU blocks those tables hold
  std::int64_t pending_copies = 0;   // copy-on-write copies queued for the kernels
  // Counters.
  PrefixCacheStats prefix;
};

}  // namespace pagesim::alloc

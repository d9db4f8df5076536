// AllocatorStats: one record of an allocator's block and prefix-cache statistics.
//
// Levels (what holds now) are kept apart from monotonic counters (since construction), as
// in STYLE rule 8. Fields that a policy has no notion of stay 0: contiguous ranges share no
// blocks and cache no prefixes, so all of their fields are 0.
#pragma once

#include <cstdint>

namespace pagesim::alloc {

// Monotonic prefix-cache counters since construction.
struct PrefixCacheStats {
  std::int64_t lookup_tokens = 0;  // prompt tokens of admitted requests that carried hashes
  std::int64_t hit_tokens = 0;     // of those, tokens whose KV was reused
  std::int64_t hit_blocks = 0;     // cached blocks reused at admission
  std::int64_t miss_blocks = 0;    // hashed prompt blocks not found (allocated and cached)
  std::int64_t evictions = 0;      // evictable blocks handed out as fresh blocks

  double hit_rate() const {
    return lookup_tokens ? static_cast<double>(hit_tokens) / static_cast<double>(lookup_tokens) : 0.0;
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

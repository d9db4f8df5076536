// Prefix-cache records: what a run with the prefix cache on reports beyond every run's
// records — extra columns of iterations.csv (PrefixIterationSample) and requests.csv
// (PrefixRequestRecord), and the "prefix_cache" object of summary.json (PrefixCacheSummary).
// They are written only when the allocator caches prefixes, so the outputs of other runs
// keep their bytes. Each has its own field list (record_fields.h). Plain values.
//
// Hit rates count first admissions over all of their prompt tokens (prompts without hash
// ids, or shorter than a block, included, so the rate does not move with the block size);
// hits of a request re-admitted after a recompute preemption are counted apart, as
// readmission hits (they are mostly on blocks the request held itself).
#pragma once

#include <cstdint>
#include <tuple>

#include "sim/output/record_fields.h"

namespace pagesim::sim {

// Columns appended to an iterations.csv row: what the scheduling of this iteration did to
// the prefix cache (counts since the previous row's iteration, so that every admission is
// in exactly one iteration; with iterations_stride > 1 the skipped iterations' counts are
// lost from the file, not from the summary).
struct PrefixIterationSample {
  std::int64_t prefix_prompt_tokens = 0;    // prompt tokens of requests first admitted now
  std::int64_t prefix_hit_tokens = 0;       // of those, served by the prefix cache
  std::int64_t readmission_hit_tokens = 0;  // served by the cache to re-admitted requests
  std::int64_t evicted_blocks = 0;          // cached blocks evicted for new blocks
  // Cached-but-free blocks are the breakdown's cached_free column (slots; ÷ block size).
};

template <>
struct RecordFields<PrefixIterationSample> {
  using S = PrefixIterationSample;
  static constexpr auto fields = std::tuple{
      Field{"prefix_prompt_tokens", &S::prefix_prompt_tokens},
      Field{"prefix_hit_tokens", &S::prefix_hit_tokens},
      Field{"readmission_hit_tokens", &S::readmission_hit_tokens},
      Field{"evicted_blocks", &S::evicted_blocks},
  };
};
static_assert(lists_every_member<PrefixIterationSample>());

// Columns appended to a requests.csv row. (RequestRecord::cached_tokens holds the hits of
// the first admission.)
struct PrefixRequestRecord {
  std::int64_t readmission_cached_tokens = 0;  // hits summed over re-admissions
};

template <>
struct RecordFields<PrefixRequestRecord> {
  using R = PrefixRequestRecord;
  static constexpr auto fields = std::tuple{Field{"readmission_cached_tokens", &R::readmission_cached_tokens}};
};
static_assert(lists_every_member<PrefixRequestRecord>());

// summary.json's "prefix_cache" object. "window" fields count admissions scheduled in
// iterations that start inside the measurement window; the others the whole run.
struct PrefixCacheSummary {
  std::int64_t prompt_tokens = 0;           // first admissions' prompt tokens
  std::int64_t hit_tokens = 0;              // of those, served by the cache
  double hit_rate = 0;                      // hit_tokens / prompt_tokens (= prefix_hit_rate)
  std::int64_t window_prompt_tokens = 0;
  std::int64_t window_hit_tokens = 0;
  double window_hit_rate = 0;               // window_hit_tokens / window_prompt_tokens
  std::int64_t readmission_hit_tokens = 0;  // served to re-admitted requests (not in hit_rate)
  std::int64_t hit_blocks = 0;              // cached blocks reused at first admissions
  std::int64_t miss_blocks = 0;             // hashed prompt blocks not found then
  std::int64_t evicted_blocks = 0;          // cached blocks evicted for new blocks
};

template <>
struct RecordFields<PrefixCacheSummary> {
  using S = PrefixCacheSummary;
  static constexpr auto fields = std::tuple{
      Field{"prompt_tokens", &S::prompt_tokens},
      Field{"hit_tokens", &S::hit_tokens},
      Field{"hit_rate", &S::hit_rate},
      Field{"window_prompt_tokens", &S::window_prompt_tokens},
      Field{"window_hit_tokens", &S::window_hit_tokens},
      Field{"window_hit_rate", &S::window_hit_rate},
      Field{"readmission_hit_tokens", &S::readmission_hit_tokens},
      Field{"hit_blocks", &S::hit_blocks},
      Field{"miss_blocks", &S::miss_blocks},
      Field{"evicted_blocks", &S::evicted_blocks},
  };
};
static_assert(lists_every_member<PrefixCacheSummary>());

}  // namespace pagesim::sim

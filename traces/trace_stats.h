// TraceStats: summary statistics of a workload (count, rate, length percentiles, sampling,
// prefix reuse), computed from a RequestSource; a table and a JSON form for reports.
//
// Percentiles are exact (nearest rank: the smallest value with at least p% of requests at or
// below it), so StatsAccumulator keeps every prompt and output length: 16 bytes per
// request (160 MB for 10M requests), plus about 40 bytes per distinct hash id for the reuse
// count. Prefix reuse: of all hash-id references (entries of TraceRequest::hash_ids, over
// all requests), the fraction that repeat an id seen before, in an earlier request or
// earlier in the same one. Not thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_set>
#include <vector>

#include "traces/request_source.h"

namespace pagesim::traces {

struct LengthSummary {  // tokens
  double mean = 0.0;
  std::int64_t min = 0;
  std::int64_t p50 = 0;
  std::int64_t p90 = 0;
  std::int64_t p99 = 0;
  std::int64_t max = 0;
  std::int64_t total = 0;  // sum over requests
};

struct TraceStats {
  std::uint64_t requests = 0;
  double first_arrival_s = 0.0;  // seconds
  double last_arrival_s = 0.0;   // seconds
  double duration_s = 0.0;       // last_arrival_s - first_arrival_s
  double mean_rate = 0.0;        // requests / duration_s, req/s (0 when duration_s is 0)
  LengthSummary prompt;          // prompt_tokens
  LengthSummary output;          // output_tokens
  std::int64_t total_tokens = 0;  // prompt.total + output.total
  double mean_n = 0.0;            // mean parallel samples per request
  double mean_beam_width = 0.0;   // mean beam width per request
  // Prefix reuse; all 0 when no request carries hash ids.
  std::int64_t hash_block_tokens = 0;        // tokens per hash id (from the source; 0 unknown)
  std::uint64_t requests_with_hash_ids = 0;  // requests with a non-empty hash_ids
  std::uint64_t hash_block_refs = 0;         // all hash-id entries
  std::uint64_t repeated_hash_block_refs = 0;  // entries whose id appeared before
  std::uint64_t distinct_hash_ids = 0;
  double hash_reuse_fraction = 0.0;  // repeated_hash_block_refs / hash_block_refs
};

class StatsAccumulator {
 public:
  explicit StatsAccumulator(std::int64_t hash_block_tokens = 0)
      : hash_block_tokens_(hash_block_tokens) {}

  // Counts one request. REQUIRES: arrival times non-decreasing across calls.
  void add(const TraceRequest& request);
  // The statistics of the requests added so far (sorts the stored lengths in place; more
  // requests may be added afterwards).
  TraceStats finish();

 private:
  std::int64_t hash_block_tokens_;
  TraceStats s_;
  std::int64_t n_sum_ = 0;
  std::int64_t beam_sum_ = 0;
  std::vector<std::int64_t> prompts_;
  std::vector<std::int64_t> outputs_;
  std::unordered_set<std::uint64_t> seen_ids_;
};

// Pulls `source` to its end and returns its statistics. Throws what the source throws.
TraceStats compute_stats(RequestSource& source);

// A human-readable, fixed-width table (several lines, ending in '\n').
std::string format_stats_table(const TraceStats& stats);

// The same fields as JSON: {"requests", "duration_s", ..., "prompt_tokens": {"mean", "p50",
// ...}, "output_tokens": {...}, "prefix_reuse": {...}}.
nlohmann::json stats_to_json(const TraceStats& stats);

}  // namespace pagesim::traces

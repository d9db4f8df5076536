// CacheCurve: hit rate against prefix-cache capacity for a trace with hash ids, idealised as
// in the Mooncake paper's Fig. 9 (Qin et al., FAST'25): no timing, no pinned blocks, every
// request looked up and then used in arrival order (lru_stack_distance.h has the rules).
//
// LRU is computed at every capacity in one pass (Mattson's stack distances); the policies of
// ideal_block_cache.h are simulated directly at the given capacities (LRU too when asked,
// which must agree with the one pass). Hit rate = prompt tokens served from cache / all
// prompt tokens (tokens without hash ids included in the denominator). Capacity is counted in
// blocks (a partial block fills a whole one) and reported in tokens = blocks x block_size.
// The whole trace's blocks are held in memory (16 bytes per block) for the direct runs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "sim/analysis/ideal_block_cache.h"
#include "traces/request_source.h"

namespace pagesim::sim {

struct CacheCurveOptions {
  // Tokens per cache block; 0 = the trace's hash block (Mooncake: 512), so each hash id is
  // one block and the infinite-capacity hit rate is `pagesim trace stats`'s prefix reuse.
  std::int64_t block_size = 0;
  // Cache a prompt's last, partial block too (as the Mooncake paper counts hash ids); false:
  // full blocks only, as the simulator's paged allocator caches them.
  bool partial_tail = true;
  // Capacities (tokens, >= 0) for the direct runs and extra exact LRU points.
  std::vector<std::int64_t> capacities_tokens;
  // Policies simulated directly at each of capacities_tokens.
  std::vector<IdealPolicy> policies = {IdealPolicy::kFifo, IdealPolicy::kLfu};
  // LRU curve points per factor of 10 in capacity (geometric grid from one block up to the
  // capacity that holds every distinct block). >= 1.
  int points_per_decade = 20;
};

enum class CurveMethod { kStack, kDirect };  // one-pass stack distances / direct simulation

struct CachePoint {
  IdealPolicy policy = IdealPolicy::kLru;
  CurveMethod method = CurveMethod::kStack;
  std::int64_t capacity_blocks = 0;
  std::int64_t capacity_tokens = 0;  // capacity_blocks * block_size
  std::int64_t hit_tokens = 0;       // prompt tokens served from cache
  std::int64_t hit_blocks = 0;
  double hit_rate = 0.0;        // hit_tokens / CacheCurve::prompt_tokens
  double block_hit_rate = 0.0;  // hit_blocks / CacheCurve::prompt_blocks
};

struct CacheCurve {
  std::string source;                  // the trace, as RequestSource::describe() says
  std::int64_t block_size = 0;         // tokens per cache block
  std::int64_t hash_block_tokens = 0;  // tokens per hash id of the trace
  std::uint64_t requests = 0;
  std::int64_t prompt_tokens = 0;    // all prompt tokens (the hit rate's denominator)
  std::int64_t prompt_blocks = 0;    // blocks with an identity, over all requests
  std::int64_t distinct_blocks = 0;  // capacity (blocks) that never evicts
  // Stack points by capacity (one at distinct_blocks: the infinite-capacity rate; the last
  // unless a larger capacity was asked for),
  // then direct points in the order of options.policies, each by capacity.
  std::vector<CachePoint> points;
};

// Reads `source` to its end and computes the curve. Throws std::invalid_argument naming the
// option (block_size < 0, a capacity < 0, points_per_decade < 1; a trace whose hash block
// size is unknown — hash_block_tokens() == 0 —, that holds no request, or in which no request
// carries hash ids), and what the source throws.
CacheCurve compute_cache_curve(traces::RequestSource& source, const CacheCurveOptions& options);

// A fixed-width table: a header, then LRU at every power of 10 blocks, at the given
// capacities and at infinity, and the direct runs.
std::string format_cache_curve_table(const CacheCurve& curve);

// Writes every point as CSV, atomically (output/atomic_file.h): policy, method, capacity_blocks,
// capacity_tokens, hit_tokens, prompt_tokens, hit_rate, hit_blocks, block_hit_rate.
// Throws std::runtime_error naming the path on an I/O error.
void write_cache_curve_csv(const CacheCurve& curve, const std::filesystem::path& path);

std::string_view to_string(IdealPolicy policy);

}  // namespace pagesim::sim

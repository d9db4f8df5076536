// LruStackDistance: Mattson's one-pass LRU analysis (Mattson et al., "Evaluation techniques
// for storage hierarchies", IBM Systems Journal 9(2), 1970) for prefix-cache lookups.
//
// LRU has the inclusion property: a cache of c blocks holds exactly the c most recently used
// distinct blocks. So a block is present at capacity c iff its recency rank (distinct blocks
// used since its last use, itself included) is <= c, and one pass over the trace gives the
// hit/miss of every access at every capacity at once. Ranks come from a FenwickTree over
// access times holding a 1 at each block's latest use: O(log n) per access.
//
// A request is looked up the way a prefix cache serves it: its blocks in order, a miss ends
// the hit run (chained keys: no later block can be used without it); then every block is
// used (touched or inserted), in order. Memory: one map entry per distinct key plus 8 bytes
// per access. Not thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <unordered_map>
#include <vector>

#include "sim/analysis/fenwick_tree.h"
#include "sim/analysis/prompt_blocks.h"

namespace pagesim::sim {

class LruStackDistance {
 public:
  // A block never used before hits at no capacity.
  static constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

  // Looks `blocks` (one request's prompt) up, then uses them. Returns in *hit_capacity, for
  // each block, the smallest LRU capacity (blocks) at which this lookup hits it (kNever if
  // none); non-decreasing along the prompt, since a hit needs every block before it.
  void lookup_then_use(std::span<const PromptBlock> blocks, std::vector<std::int64_t>* hit_capacity);

  // Distinct keys used so far: a cache this large never evicts, so it gives the hit rate at
  // infinite capacity.
  std::int64_t distinct_blocks() const { return static_cast<std::int64_t>(last_use_.size()); }

 private:
  FenwickTree latest_use_marks_;  // position t holds 1 iff access t is its key's latest use
  std::unordered_map<alloc::BlockHash, std::int64_t> last_use_;  // key -> access time (position)
};

}  // namespace pagesim::sim

// IterationPlan: what one iteration computes, as decided by a Scheduler.
//
// Filled by Scheduler::schedule at the start of an iteration and applied by the engine when
// the iteration ends. Request pointers are the engine's and stay valid until it applies the
// plan. A plain value type, cleared and refilled each iteration (no steady-state allocation).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/request.h"
#include "sim/core/tier_cost.h"

namespace pagesim::sim {

struct PrefillWork {
  Request* request = nullptr;
  std::int64_t new_tokens = 0;     // tokens whose KV this iteration computes
  std::int64_t cached_before = 0;  // tokens of this prefill already computed or cached
  bool completes = false;          // this chunk ends the prefill: a token is sampled
  bool admitted = false;           // the request was admitted in this iteration (first time
                                   // or back from a recompute preemption): cached_before is
                                   // its prefix-cache hit
};

struct IterationPlan {
  std::vector<PrefillWork> prefills;
  std::vector<Request*> decodes;   // each live sequence of these groups makes one token
  std::int64_t decode_seqs = 0;
  std::int64_t swap_out_blocks = 0;
  std::int64_t swap_in_blocks = 0;
  std::int32_t recompute_preemptions = 0;
  std::int32_t swap_preemptions = 0;
  std::vector<Request*> preempted;  // preempted in this iteration, in order (recompute + swap)
  TierCost tier;  // set by the engine when it prices the plan (offload tiers only)

  void clear() {
    prefills.clear();
    decodes.clear();
    preempted.clear();
    decode_seqs = swap_out_blocks = swap_in_blocks = 0;
    recompute_preemptions = swap_preemptions = 0;
    tier = {};
  }
  bool has_compute() const { return !prefills.empty() || !decodes.empty(); }
  // Something happened even without compute (a preemption moved or freed memory).
  bool changed_state() const { return recompute_preemptions + swap_preemptions > 0 || swap_in_blocks > 0; }
  std::int64_t batched_requests() const {
    return static_cast<std::int64_t>(prefills.size() + decodes.size());
  }
};

}  // namespace pagesim::sim

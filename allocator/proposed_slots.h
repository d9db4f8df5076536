// ProposedSlots: the slots one decode step of speculative decoding asks of a sequence beyond
// the newest token's, and what verification will make of them.
//
// A speculative step (Leviathan et al. 2023, "Fast Inference from Transformers via
// Speculative Decoding", arXiv:2211.17192) verifies `proposed` draft tokens in one forward
// pass of the target model: the pass writes the KV of the newest token and of every proposed
// token, the first `proposed - rejected` proposals are accepted (their KV stays: token
// states) and the rest are rejected (their slots are freed). A drafter that keeps KV in the
// target's block table (EAGLE in vLLM v1) also needs `lookahead` slots beyond them for the
// proposals it writes during the step: vLLM v1's scheduler passes
// num_lookahead_tokens = num_speculative_tokens (EAGLE only) to
// KVCacheManager.allocate_slots, which allocates blocks for
// num_computed_tokens + num_new_tokens + num_lookahead_tokens
// (vllm/v1/core/sched/scheduler.py, vllm/v1/core/kv_cache_manager.py). The memory breakdown
// shows the three as proposed_accepted, proposed_rejected and lookahead (memory_breakdown.h);
// none of them is ever cached (vLLM v1 caches no speculated token: KVCacheManager's
// cache_blocks covers num_computed_tokens + num_new_tokens - len(spec_token_ids)).
// Knowing at reservation time how many proposals will be rejected is accounting only, as
// over_reserved knows the true output length. A plain value type.
#pragma once

#include <cstdint>

namespace pagesim::alloc {

struct ProposedSlots {
  std::int64_t proposed = 0;   // draft tokens verified in the step, >= 0
  std::int64_t rejected = 0;   // of them, rejected by verification, in [0, proposed]
  std::int64_t lookahead = 0;  // slots for the drafter's next proposals, >= 0

  // Slots beyond the newest token's that the step holds until verification.
  std::int64_t pending() const { return proposed + lookahead; }
  // Slots verification frees.
  std::int64_t released() const { return rejected + lookahead; }
};

}  // namespace pagesim::alloc

// Request: one trace request in flight — a sequence group in vLLM's terms.
//
// A request starts with one sequence (its prompt). Parallel sampling (n > 1) and beam search
// (beam_width > 1) fork it into several sequences after the prompt is processed; all of a
// group's sequences generate in lockstep and finish together (output lengths are forced, as
// in the vLLM paper's artifact). The engine owns every Request; schedulers hold pointers into
// the engine's storage, valid until the request finishes.
#pragma once

#include <cstdint>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "allocator/kv_allocator.h"

namespace pagesim::sim {

// A request's allocator sequences (Request::seqs): one inline, as most requests have.
using SeqHandles = boost::container::small_vector<alloc::SeqHandle, 1>;

enum class RequestState { kWaiting, kRunning, kSwapped, kFinished };

// Aligned to a cache line, with what every pass over a running batch reads (settling a
// decode run, applying a plan, beginning a run, planning decodes) in its first two lines:
// in a fleet those passes find a request cold, and pay a miss for each line they touch.
struct alignas(64) Request {
  // ---- The first two cache lines: a running batch's passes read these. ----
  std::int64_t prompt_tokens = 0;   // from the trace
  std::int64_t output_tokens = 0;   // from the trace: tokens to generate, >= 1
  std::int64_t generated = 0;       // output tokens generated so far, per sequence
  std::int64_t to_prefill = 0;      // tokens of the pending prefill (prompt, + generated after
                                    // a recompute); 0 once the prefill is done
  std::int64_t prefilled = 0;       // of to_prefill, tokens whose KV is computed or cached
  double first_token_s = -1;
  double last_token_s = -1;         // when the newest token came out
  double max_token_gap_s = 0;       // longest time between two consecutive tokens
  RequestState state = RequestState::kWaiting;  // in the current residency
  std::int32_t n = 1;               // from the trace: parallel samples
  std::int32_t beam_width = 1;      // from the trace: beams (> 1: beam search)
  // Speculative decoding: the step went through grow_proposed (the engine verifies it when
  // the step ends); the step's counts are below.
  bool spec_step = false;
  // Live allocator sequences; empty while waiting. One inline (a request without parallel
  // samples or beams, most of them): the engine's passes over a batch read it with the
  // request, not from a heap block of its own.
  SeqHandles seqs;
  double finish_s = -1;

  // ---- The rest: from the trace. ----
  std::uint64_t id = 0;
  double arrival_s = 0;
  // Prefix-cache keys of the prompt's full blocks; after a recompute preemption under a
  // policy that keeps the preempted request's blocks cached (SchedulerTraits::
  // caches_preempted_blocks), of every full block it had computed, generated tokens included.
  std::vector<alloc::BlockHash> block_hashes;
  std::int32_t adapter = -1;       // LoRA adapter (>= 0), or -1: the base model

  // Progress in the current residency.
  bool preempted_now = false;      // preempted in the iteration being scheduled
  bool adapter_pinned = false;     // holds a pin on its adapter (from admission to free)
  // Speculative decoding: the step planned for this request verifies `spec_proposed` proposed
  // tokens, of which verification accepts `spec_accepted` (drawn when planned). Both 0 when
  // the step proposes nothing, and whenever spec_step is false.
  std::int64_t spec_proposed = 0;
  std::int64_t spec_accepted = 0;
  std::int64_t spec_emitted = 0;   // tokens the step emits: 1 + the accepted ones up to the
                                   // request's last token (accepted past it are dropped)

  std::int32_t replica = 0;        // the replica the router sent it to (0 with one replica)

  // Measurements (first_token_s, last_token_s, max_token_gap_s and finish_s above).
  double first_scheduled_s = -1;
  std::int32_t preemptions = 0;        // recompute + swap
  std::int32_t recomputes = 0;
  std::int64_t swapped_blocks = 0;     // blocks moved GPU->CPU and back, summed
  std::int64_t cached_tokens = 0;      // prompt tokens served by the prefix cache at the first
                                       // admission
  std::int64_t readmission_cached_tokens = 0;  // tokens served by the prefix cache at
                                               // re-admissions after recompute preemptions
  std::int64_t recomputed_tokens = 0;  // tokens prefilled again after recompute preemptions
  // Disaggregated prefill/decode (docs/engine.md), -1 otherwise: the prefill replica, and when
  // the KV transfer to the decode replica (then `replica`) started and ended.
  std::int32_t prefill_replica = -1;
  double transfer_start_s = -1, transfer_end_s = -1;

  // Sequences the group has once forked (1 before the prompt is done).
  std::int32_t width() const { return beam_width > 1 ? beam_width : n; }
  bool in_prefill() const { return prefilled < to_prefill; }
  // The ids of seqs, in order.
  std::vector<alloc::SeqId> seq_ids() const {
    std::vector<alloc::SeqId> ids;
    ids.reserve(seqs.size());
    for (const alloc::SeqHandle& s : seqs) ids.push_back(s.id);
    return ids;
  }
  std::int64_t final_tokens() const { return prompt_tokens + output_tokens; }
};

}  // namespace pagesim::sim

// VllmV1Scheduler: vLLM v1's scheduler (vllm/v1/core/sched/scheduler.py, Scheduler.schedule)
// over a paged pool with prefix caching. Each step has one token budget,
// scheduler.max_num_batched_tokens, spent in two passes:
//   (1) running requests, in the order they were (re-)admitted (v1's `self.running`; under
//       FCFS that is arrival order, the base class's: a preempted request returns to the
//       front of the waiting queue, ahead of every later arrival): each asks for what it still
//       lacks, capped by the budget left — a decoding request one token per sequence, one in
//       a (chunked) prefill the rest of its prompt (+ tokens generated before a recompute).
//       When the pool cannot give it the blocks (KVCacheManager.allocate_slots returns None),
//       the *last* running request is preempted by recompute (`self.running.pop()`), until
//       the request fits or was itself the last; then the pass ends.
//   (2) only if nothing was preempted in this step: waiting requests, FCFS, while budget is
//       left, the sequence limit allows and the pool can hold the prompt's cached blocks plus
//       the new chunk (allocate_slots again; no watermark in v1). A prompt is looked up
//       whole; hits are whole blocks and leave its last token to compute
//       (KVCacheManager.get_computed_blocks caps them at num_tokens - 1); the budget pays
//       only for the tokens computed after the hits; the last admitted prompt is cut to
//       the budget left (chunked prefill is always on in v1).
// A recompute-preempted request goes to the front of the waiting queue and keeps its block
// hashes; its freed blocks keep theirs until evicted, so re-admission hits what is still
// cached. The pool must be built with single_free_queue (v1's FreeKVCacheBlockQueue); the
// experiment does so for this scheduler. It uses only the KvAllocator interface, so it also
// runs over the layer-group pools (allocator.kind: uniform, hybrid, jenga, vattention), whose
// block pools take the same queue (GroupedKvAllocator): vLLM v1's hybrid KV cache manager is
// `hybrid` under this very scheduler (vllm/v1/core/kv_cache_coordinator.py allocates every
// group's blocks or none).
// Speculative decoding (settings.speculative, sim/core/speculative_settings.h): a decoding
// single-sequence request asks for 1 + k tokens of the budget, k cut to what the budget leaves
// (v1 trims spec_token_ids to the budget), and for the newest token's slot, k proposed slots
// and the drafter's lookahead slots in one allocation (KvAllocator::grow_proposed;
// allocate_slots with num_lookahead_tokens); how many proposals verification accepts is
// drawn then (AcceptanceSampler) and the engine emits them and verifies the slots when the
// step ends. Groups (n > 1, beams) decode without speculation.
// A prefill's tokens in a step are capped by long_prefill_token_threshold when set (0: off);
// from vLLM 0.31.0 only while more than one request is running or waiting (vllm_version.h).
// Not modelled: encoder budgets, priority scheduling, swapping (v1 has none), v1's reserved null block.
// Parallel sampling and beams decode as one group in lockstep (one token per sequence, the
// group scheduled only whole: v1 fans n > 1 out into separate requests instead).
// Borrows the allocator. Not thread-safe.
#pragma once

#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "allocator/kv_allocator.h"
#include "sim/core/acceptance_sampler.h"
#include "sim/scheduler/scheduler.h"
#include "sim/scheduler/scheduler_kind.h"

namespace pagesim::sim {

class VllmV1Scheduler final : public Scheduler {
 public:
  VllmV1Scheduler(const SchedulerSettings& settings, alloc::KvAllocator& allocator);
  void schedule(double now, IterationPlan& plan) override;
  // admit_waiting takes heads FCFS until one does not fit, at most max_num_seqs of them;
  // LoRA may skip heads (max_loras).
  std::size_t waiting_lookahead() const override {
    return adapters() ? kWholeQueue : static_cast<std::size_t>(settings_.max_num_seqs) + 1;
  }
  // With no request swapped, no speculation and a token budget of at least one token per
  // running sequence, pass (1) decodes every running group in order (the budget never runs
  // out before the last); pass (2) may admit while a request waits (the default
  // admits_after_decodes).
  bool promises_running_decodes() const override {
    return swapped().empty() && !sampler_ && num_running_seqs() <= settings_.max_num_batched_tokens;
  }

 protected:
  // Speculative decoding: a request's last step holds its k proposed and lookahead slots too.
  std::int64_t headroom_slots(const Request& r) const override;

 private:
  // Pass (1). Returns the budget left; *preempted says whether anything was preempted.
  std::int64_t schedule_running(IterationPlan& plan, bool* preempted);
  // Pass (2).
  void admit_waiting(double now, IterationPlan& plan, std::int64_t budget);
  // Gives running request r the room for `tokens` more tokens (a prefill chunk of its one
  // sequence, or one token per sequence when decoding). False, changing nothing, when the
  // pool lacks the blocks.
  bool grow(Request* r, std::int64_t tokens);
  // A speculative decode step for r's one sequence: the newest token's slot plus `proposed`
  // proposed slots and the lookahead; draws how many verification accepts. False, changing
  // nothing, when the pool lacks the blocks.
  bool grow_speculative(Request* r, std::int64_t proposed);
  bool speculates(const Request* r) const { return sampler_ && r->seqs.size() == 1; }
  // A prefill's tokens this step, capped by long_prefill_token_threshold when it applies.
  std::int64_t prefill_cap(std::int64_t tokens) const {
    return step_threshold_ > 0 ? std::min(tokens, step_threshold_) : tokens;
  }

  alloc::KvAllocator& pool_;
  std::optional<AcceptanceSampler> sampler_;  // engaged when speculation is on
  std::int64_t step_threshold_ = 0;           // this step's long_prefill_token_threshold (0: off)
};

// scheduler.kind: vllm-v1, over the paged pool or a layer-group pool; implies prefix caching
// and the pool's single free-block queue; refuses swap (v1 has no swap space).
inline constexpr std::array<alloc::AllocatorKind, 5> kVllmV1Pools = {
    alloc::AllocatorKind::kPaged, alloc::AllocatorKind::kUniform, alloc::AllocatorKind::kHybrid,
    alloc::AllocatorKind::kJenga, alloc::AllocatorKind::kVattention};
std::unique_ptr<Scheduler> make_vllm_v1_scheduler(const SchedulerSettings& settings, PoolRef pool);
// The refusal of a pool outside kVllmV1Pools (SchedulerDescriptor::pool_refusal).
std::string vllm_v1_pool_refusal(std::string_view found, std::string_view hint);
inline constexpr SchedulerDescriptor kVllmV1SchedulerKind = {
    .kind = SchedulerKind::kVllmV1,
    .name = "vllm-v1",
    .summary = "vLLM v1: one token budget, chunked prefill, prefix caching on",
    .traits = {.chunked_prefill = true,
               .whole_block_prefix_hits = true,
               .repeats_decode_plans = true,
               .caches_preempted_blocks = true},
    .allocators = kVllmV1Pools,
    .drives = PoolInterface::kKvAllocator,
    .pool_check = PoolCheck::kWithPoolKeys,
    .pool_refusal = &vllm_v1_pool_refusal,
    .prefix_cache_by_default = true,
    .single_free_queue = true,
    .lora = true,
    .speculation = true,
    .swap_refusal = "scheduler.kind: vllm-v1 preempts by recompute only (vLLM v1 has no swap space): set "
                    "scheduler.preemption: recompute or auto, or use scheduler.kind: vllm",
    .reads_long_prefill_token_threshold = true,
    .build = &make_vllm_v1_scheduler,
};

}  // namespace pagesim::sim

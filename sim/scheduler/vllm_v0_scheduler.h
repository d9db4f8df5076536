// VllmV0Scheduler: the prefill-first policy of vLLM 0.2–0.5 (and of Vidur's `vllm` replica
// scheduler), over a paged pool.
//
// Each iteration is either all prefills or all decodes, never both:
//   (1) while nothing is swapped, waiting groups are admitted FCFS as the artifact policy
//       admits them (free blocks − the group's blocks >= the watermark, prompt tokens of the
//       iteration <= max_num_batched_tokens, running sequences <= max_num_seqs); if any was
//       admitted, the iteration runs those prefills only and the running decodes wait;
//   (2) otherwise every running group needs one free block per sequence, else the latest
//       arrival is preempted (recompute, or swap under the preemption mode), as in `vllm`;
//   (3) only when (2) preempted nothing, swapped groups come back FCFS.
// Sources: vLLM v0.4–0.5 vllm/core/scheduler.py, Scheduler._schedule_default ("Don't
// schedule decodes if prefills are scheduled"; swapped groups first; no swap-in after a
// preemption) with _schedule_prefills / _schedule_running / _schedule_swapped; vLLM 0.2
// Scheduler._schedule (returns a prompt-only SchedulerOutputs when any waiting group was
// scheduled); Vidur vidur/scheduler/replica_scheduler/vllm_replica_scheduler.py,
// VLLMReplicaScheduler._get_next_batch (returns the prefill batch when the request queue
// yielded requests, else decodes the preempted-to-running ones).
// It differs from `vllm` (the 2023 artifact), which decodes the running groups and admits
// new prompts in the same iteration. Borrows the PagedAllocator. Not thread-safe.
#pragma once

#include "sim/scheduler/vllm_scheduler.h"

namespace pagesim::sim {

class VllmV0Scheduler final : public VllmScheduler {
 public:
  VllmV0Scheduler(const SchedulerSettings& settings, alloc::PagedAllocator& allocator);
  void schedule(double now, IterationPlan& plan) override;
  // It admits before it decodes: no promise while a request waits.
  bool admits_after_decodes(std::int64_t) const override { return !waiting().empty(); }
};

// scheduler.kind: vllm-v0, over a paged pool only (refused when the run is built).
std::unique_ptr<Scheduler> make_vllm_v0_scheduler(const SchedulerSettings& settings, PoolRef pool);
inline constexpr SchedulerDescriptor kVllmV0SchedulerKind = {
    .kind = SchedulerKind::kVllmV0,
    .name = "vllm-v0",
    .summary = "vLLM 0.2-0.5: prefill-only iterations whenever a prompt fits",
    .traits = {.chunked_prefill = false, .repeats_decode_plans = true},
    .allocators = kPagedPoolOnly,
    .drives = PoolInterface::kPaged,
    .pool_check = PoolCheck::kAtBuild,
    .lora = true,
    .build = &make_vllm_v0_scheduler,
};

}  // namespace pagesim::sim

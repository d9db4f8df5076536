// VllmScheduler: the vLLM paper artifact's scheduler over a paged pool (DESIGN.md, "the
// artifact's scheduler, step by step"): (1) every running group past its prefill needs one
// free block per sequence, else the latest-arrived group is preempted (swap for groups,
// recompute for single sequences under `preemption: auto`); (2) swapped groups come back
// first, FCFS, and while any is swapped nothing is admitted; (3) waiting groups are
// admitted FCFS while the watermark, the token budget and the sequence limit allow.
// Sarathi derives from it for chunked prefill. Borrows the PagedAllocator. Not thread-safe.
#pragma once

#include <array>
#include <limits>
#include <memory>
#include <string>

#include "allocator/paged/paged_allocator.h"
#include "sim/scheduler/scheduler.h"
#include "sim/scheduler/scheduler_kind.h"

namespace pagesim::sim {

class VllmScheduler : public Scheduler {
 public:
  VllmScheduler(const SchedulerSettings& settings, alloc::PagedAllocator& allocator);
  void schedule(double now, IterationPlan& plan) override;
  // Step (1)'s free block per sequence of the widest group: less preempts.
  std::int64_t decode_repeat_free_slots(const IterationPlan& plan) const override;
  // With no request swapped, step 1 decodes every running group in order and step 2 adds
  // nothing; step 3 admits what admits_after_decodes says. (vllm-v0 and sarathi, which
  // reorder or chunk the steps, keep the default admits_after_decodes.)
  bool promises_running_decodes() const override { return swapped().empty(); }
  // Step 3's checks on the waiting head (whole prompts, after step 1's appends).
  bool admits_after_decodes(std::int64_t appended_blocks) const override;
  // admit_waiting takes heads FCFS until one does not fit, at most max_num_seqs of them (each
  // adds a running sequence): max_num_seqs + 1 heads; LoRA may skip heads (max_loras).
  std::size_t waiting_lookahead() const override {
    return adapters() ? kWholeQueue : static_cast<std::size_t>(settings_.max_num_seqs) + 1;
  }

 protected:
  // Step 1 for groups past their prefill; groups still in a chunked prefill are kept
  // running but left to the caller (returned in *prefilling, oldest first).
  void reserve_running_slots(IterationPlan& plan, std::vector<Request*>* prefilling);
  // Step 2. Returns true if any group is still swapped.
  bool swap_in_groups(IterationPlan& plan);
  // Step 3. `token_limit` bounds the iteration's batched tokens; with `chunked`, the last
  // admitted prompt may be cut to fit (chunked prefill), else it must fit whole.
  void admit_waiting(double now, IterationPlan& plan, std::int64_t batched_tokens,
                     std::int64_t token_limit, bool chunked);
  // Blocks an admission or swap-in must leave free: watermark × pool.
  std::int64_t watermark_blocks() const;
  // One free block per sequence (the conservative slot check demands it even at the last
  // step: without it a request filling the pool would preempt itself forever) + the
  // watermark.
  std::int64_t headroom_slots(const Request& r) const override;
  // Swaps a group past its prefill out when the preemption mode asks for it and the CPU
  // pool has room.
  bool try_swap_out(Request* r, IterationPlan& plan) override;

  alloc::PagedAllocator& paged_;
};

// scheduler.kind: vllm, over a paged pool only (refused when the run is built).
inline constexpr std::array<alloc::AllocatorKind, 1> kPagedPoolOnly = {alloc::AllocatorKind::kPaged};
std::unique_ptr<Scheduler> make_vllm_scheduler(const SchedulerSettings& settings, PoolRef pool);
inline constexpr SchedulerDescriptor kVllmSchedulerKind = {
    .kind = SchedulerKind::kVllm,
    .name = "vllm",
    .summary = "the vLLM paper artifact: decodes first, swapped back, FCFS admission",
    .traits = {.chunked_prefill = false, .repeats_decode_plans = true},
    .allocators = kPagedPoolOnly,
    .drives = PoolInterface::kPaged,
    .pool_check = PoolCheck::kAtBuild,
    .lora = true,
    .build = &make_vllm_scheduler,
};

}  // namespace pagesim::sim

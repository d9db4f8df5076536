// SarathiScheduler: vLLM's policy with chunked prefill under a per-iteration token budget
// (Sarathi-Serve). Each iteration spends `chunk_tokens` tokens: first one per decoding
// sequence (with vLLM's preemption and swap-in rules), then the next chunks of prefills in
// progress (oldest first), then new admissions, the last one cut to the remaining budget.
// Decodes are never stalled behind a long prompt. With the prefix cache, admission looks the
// whole prompt up and holds its cached blocks; the budget pays only for the tokens computed
// after them (as vLLM v1's scheduler does), and each later chunk's full prompt blocks are
// cached as they are filled.
#pragma once

#include "sim/scheduler/vllm_scheduler.h"

namespace pagesim::sim {

class SarathiScheduler final : public VllmScheduler {
 public:
  SarathiScheduler(const SchedulerSettings& settings, alloc::PagedAllocator& allocator);
  void schedule(double now, IterationPlan& plan) override;
  // It admits a chunk of the head into the token budget the decodes leave: no promise while a request waits.
  bool admits_after_decodes(std::int64_t) const override { return !waiting().empty(); }
};

// scheduler.kind: sarathi, over a paged pool only (refused when the run is built).
std::unique_ptr<Scheduler> make_sarathi_scheduler(const SchedulerSettings& settings, PoolRef pool);
inline constexpr SchedulerDescriptor kSarathiSchedulerKind = {
    .kind = SchedulerKind::kSarathi,
    .name = "sarathi",
    .summary = "vllm with chunked prefill under chunk_tokens per iteration (Sarathi-Serve)",
    .traits = {.chunked_prefill = true, .repeats_decode_plans = true},
    .allocators = kPagedPoolOnly,
    .drives = PoolInterface::kPaged,
    .pool_check = PoolCheck::kAtBuild,
    .lora = true,
    .reads_chunk_tokens = true,
    .build = &make_sarathi_scheduler,
};

}  // namespace pagesim::sim

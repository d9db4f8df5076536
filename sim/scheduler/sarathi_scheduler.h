// SarathiScheduler: vLLM's policy with chunked prefill under a per-iteration token budget
// (Sarathi-Serve). Each iteration spends `chunk_tokens` tokens: first one per decoding
// sequence (with vLLM's preemption and swap-in rules), then the next chunks of prefills in
// progress (oldest first), then new admissions, the last one cut to the remaining budget.
// Decodes are never stalled behind a long prompt.
// Limitation: with the prefix cache, only a request's first chunk looks up and registers
// cached blocks; later chunks are plain appends (the allocator has no keyed append yet), so
// hits beyond the first chunk are missed and prefix_hit_rate is a lower bound.
#pragma once

#include "sim/scheduler/vllm_scheduler.h"

namespace pagesim::sim {

class SarathiScheduler final : public VllmScheduler {
 public:
  SarathiScheduler(const SchedulerSettings& settings, alloc::PagedAllocator& allocator);
  void schedule(double now, IterationPlan& plan) override;
};

}  // namespace pagesim::sim

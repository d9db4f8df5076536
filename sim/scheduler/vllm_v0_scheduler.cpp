#include "sim/scheduler/vllm_v0_scheduler.h"

namespace pagesim::sim {

std::unique_ptr<Scheduler> make_vllm_v0_scheduler(const SchedulerSettings& settings, PoolRef pool) {
  return std::make_unique<VllmV0Scheduler>(settings, *pool.paged());
}

VllmV0Scheduler::VllmV0Scheduler(const SchedulerSettings& settings, alloc::PagedAllocator& allocator)
    : VllmScheduler(settings, allocator) {}

void VllmV0Scheduler::schedule(double now, IterationPlan& plan) {
  begin_iteration(plan);
  if (swapped().empty()) {
    // The prefill budget counts prompt tokens only (the decodes do not run alongside);
    // running sequences still count against max_num_seqs inside admit_waiting.
    admit_waiting(now, plan, 0, settings_.max_num_batched_tokens, false);
    if (!plan.prefills.empty()) return;
  }
  reserve_running_slots(plan, nullptr);
  if (plan.recompute_preemptions + plan.swap_preemptions > 0) return;  // no room to bring any back
  swap_in_groups(plan);
}

}  // namespace pagesim::sim

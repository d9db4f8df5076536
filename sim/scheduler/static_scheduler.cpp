#include "sim/scheduler/static_scheduler.h"

namespace pagesim::sim {

void StaticScheduler::schedule(double now, IterationPlan& plan) {
  plan.clear();
  if (!running_.empty()) {
    // No admission while a batch runs, so a preemption blocks nothing beyond this iteration.
    for (Request* r : grow_running_or_recompute(plan)) r->preempted_now = false;
    return;
  }
  admit_fcfs(now, plan, 0);
}

}  // namespace pagesim::sim

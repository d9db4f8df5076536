#include "sim/scheduler/static_scheduler.h"

namespace pagesim::sim {

std::unique_ptr<Scheduler> make_static_scheduler(const SchedulerSettings& settings, PoolRef pool) {
  return std::make_unique<StaticScheduler>(settings, pool.any());
}

void StaticScheduler::schedule(double now, IterationPlan& plan) {
  begin_iteration(plan);
  if (!running().empty()) {
    grow_running_or_recompute(plan);  // no admission while a batch runs
    return;
  }
  admit_fcfs(now, plan, 0);
}

}  // namespace pagesim::sim

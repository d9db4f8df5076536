#include "sim/scheduler/orca_scheduler.h"

namespace pagesim::sim {

std::unique_ptr<Scheduler> make_orca_scheduler(const SchedulerSettings& settings, PoolRef pool) {
  return std::make_unique<OrcaScheduler>(settings, pool.any());
}

void OrcaScheduler::schedule(double now, IterationPlan& plan) {
  begin_iteration(plan);
  grow_running_or_recompute(plan);
  admit_fcfs(now, plan, num_running_seqs());
}

}  // namespace pagesim::sim

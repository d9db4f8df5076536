#include "sim/scheduler/orca_scheduler.h"

namespace pagesim::sim {

void OrcaScheduler::schedule(double now, IterationPlan& plan) {
  plan.clear();
  for (Request* r : preempted_) r->preempted_now = false;
  preempted_ = grow_running_or_recompute(plan);
  admit_fcfs(now, plan, running_seqs_);
}

}  // namespace pagesim::sim

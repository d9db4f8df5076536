#include "sim/scheduler/orca_scheduler.h"

#include <algorithm>
#include <limits>

namespace pagesim::sim {

void OrcaScheduler::schedule(double now, IterationPlan& plan) {
  plan.clear();
  for (Request* r : preempted_) r->preempted_now = false;
  preempted_.clear();

  std::vector<Request*> kept;
  kept.reserve(running_.size());
  for (Request* r : running_) {
    if (append_slots(r)) {
      kept.push_back(r);
      add_decode(r, plan);
    } else {
      preempt(r, plan);
      preempted_.push_back(r);
    }
  }
  running_ = std::move(kept);
  // Each preemption went to the front of waiting_, oldest first: restore arrival order.
  std::reverse(waiting_.begin(), waiting_.begin() + plan.recompute_preemptions);

  std::int64_t batched = running_seqs_;
  while (!waiting_.empty()) {
    Request* r = waiting_.front();
    if (r->preempted_now) break;
    const std::int64_t tokens = r->prompt_tokens + r->generated;
    if (batched + tokens > settings_.max_num_batched_tokens) break;
    if (running_seqs_ + r->width() > settings_.max_num_seqs) break;
    if (!alloc_.can_admit(admit_request(*r, 0))) break;
    waiting_.pop_front();
    admit(r, now, std::numeric_limits<std::int64_t>::max(), plan);
    batched += tokens;
  }
}

}  // namespace pagesim::sim

#include "sim/scheduler/static_scheduler.h"

#include <algorithm>
#include <limits>

namespace pagesim::sim {

void StaticScheduler::schedule(double now, IterationPlan& plan) {
  plan.clear();
  if (!running_.empty()) {
    std::vector<Request*> kept;
    for (Request* r : running_) {
      if (append_slots(r)) {
        kept.push_back(r);
        add_decode(r, plan);
      } else {
        preempt(r, plan);
        r->preempted_now = false;
      }
    }
    running_ = std::move(kept);
    // Each preemption went to the front of waiting_, oldest first: restore arrival order.
    std::reverse(waiting_.begin(), waiting_.begin() + plan.recompute_preemptions);
    return;
  }
  std::int64_t batched = 0;
  while (!waiting_.empty()) {
    Request* r = waiting_.front();
    const std::int64_t tokens = r->prompt_tokens + r->generated;
    if (running_seqs_ + r->width() > settings_.max_num_seqs) break;
    if (batched + tokens > settings_.max_num_batched_tokens) break;
    if (!alloc_.can_admit(admit_request(*r, 0))) break;
    waiting_.pop_front();
    admit(r, now, std::numeric_limits<std::int64_t>::max(), plan);
    batched += tokens;
  }
}

}  // namespace pagesim::sim

#include "sim/scheduler/sarathi_scheduler.h"

#include <algorithm>
#include <cassert>

#include <fmt/format.h>

namespace pagesim::sim {

std::unique_ptr<Scheduler> make_sarathi_scheduler(const SchedulerSettings& settings, PoolRef pool) {
  return std::make_unique<SarathiScheduler>(settings, *pool.paged());
}

SarathiScheduler::SarathiScheduler(const SchedulerSettings& settings, alloc::PagedAllocator& allocator)
    : VllmScheduler(settings, allocator) {
  assert(settings.chunk_tokens >= 1);  // checked at parse time (experiment_config.cpp)
}

void SarathiScheduler::schedule(double now, IterationPlan& plan) {
  begin_iteration(plan);
  std::vector<Request*> prefilling;
  reserve_running_slots(plan, &prefilling);
  const bool still_swapped = swap_in_groups(plan);
  std::int64_t used = plan.decode_seqs;

  for (Request* r : prefilling) {
    if (r->state != RequestState::kRunning) continue;  // preempted below for an older one
    const std::int64_t chunk = std::min(settings_.chunk_tokens - used, r->to_prefill - r->prefilled);
    if (chunk <= 0) break;
    const alloc::SeqId seq = r->seqs.front().id;
    // Make room by preempting (recompute) the latest-arrived group after r still in its
    // prefill: decoding groups already hold this iteration's slot, older ones are planned.
    while (!paged_.can_append(seq, chunk)) {
      const std::vector<Request*>& running = this->running();
      auto self = std::find(running.rbegin(), running.rend(), r);  // victims arrived after r
      auto victim = std::find_if(running.rbegin(), self, [](Request* x) { return x->in_prefill(); });
      if (victim == self) break;
      preempt_running(*victim, plan);
    }
    if (!paged_.append(seq, chunk)) break;
    plan.prefills.push_back({r, chunk, r->prefilled, r->prefilled + chunk == r->to_prefill, /*admitted=*/false});
    used += chunk;
  }
  if (still_swapped) return;
  admit_waiting(now, plan, used, settings_.chunk_tokens, true);
}

}  // namespace pagesim::sim

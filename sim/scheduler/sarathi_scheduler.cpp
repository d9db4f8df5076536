#include "sim/scheduler/sarathi_scheduler.h"

#include <algorithm>

#include <fmt/format.h>

namespace pagesim::sim {

SarathiScheduler::SarathiScheduler(const SchedulerSettings& settings, alloc::KvAllocator& allocator)
    : VllmScheduler(settings, allocator) {
  if (settings.chunk_tokens < 1)
    throw std::invalid_argument(fmt::format("scheduler.chunk_tokens must be >= 1, got {}", settings.chunk_tokens));
}

void SarathiScheduler::schedule(double now, IterationPlan& plan) {
  plan.clear();
  reset_preempted_flags();
  std::vector<Request*> prefilling;
  reserve_running_slots(plan, &prefilling);
  const bool still_swapped = swap_in_groups(plan);
  std::int64_t used = plan.decode_seqs;

  for (Request* r : prefilling) {
    if (r->state != RequestState::kRunning) continue;  // preempted below for an older one
    const std::int64_t chunk = std::min(settings_.chunk_tokens - used, r->to_prefill - r->prefilled);
    if (chunk <= 0) break;
    const alloc::SeqId seq = r->seqs.front();
    // Make room by preempting (recompute) the latest-arrived group after r still in its
    // prefill: decoding groups already hold this iteration's slot, older ones are planned.
    while (!paged_->can_append(seq, chunk)) {
      auto self = std::find(running_.rbegin(), running_.rend(), r);  // victims arrived after r
      auto victim = std::find_if(running_.rbegin(), self, [](Request* x) { return x->in_prefill(); });
      if (victim == self) break;
      Request* v = *victim;
      running_.erase(std::next(victim).base());
      preempt(v, plan);
      preempted_.push_back(v);
    }
    if (!paged_->append(seq, chunk)) break;
    plan.prefills.push_back({r, chunk, r->prefilled, r->prefilled + chunk == r->to_prefill});
    used += chunk;
  }
  if (still_swapped) return;
  admit_waiting(now, plan, used, settings_.chunk_tokens, true);
}

}  // namespace pagesim::sim

#include "sim/scheduler/vllm_scheduler.h"

#include <algorithm>

namespace pagesim::sim {

VllmScheduler::VllmScheduler(const SchedulerSettings& settings, alloc::KvAllocator& allocator)
    : Scheduler(settings, allocator) {
  if (!paged_)
    throw std::invalid_argument("scheduler.kind '" + std::string(to_string(settings.kind)) +
                                "' needs a paged allocator (allocator.kind: paged), got " + allocator.name());
}

void VllmScheduler::reset_preempted_flags() {
  for (Request* r : preempted_) r->preempted_now = false;
  preempted_.clear();
}

void VllmScheduler::reserve_running_slots(IterationPlan& plan, std::vector<Request*>* prefilling) {
  std::vector<Request*> kept;
  kept.reserve(running_.size());
  std::size_t lo = 0, hi = running_.size();
  while (lo < hi) {
    Request* r = running_[lo++];
    if (r->in_prefill()) {
      kept.push_back(r);
      if (prefilling) prefilling->push_back(r);
      continue;
    }
    bool preempted_self = false;
    while (paged_->num_free_blocks() < static_cast<std::int64_t>(r->seqs.size())) {
      Request* victim = lo < hi ? running_[--hi] : r;
      preempt(victim, plan);
      preempted_.push_back(victim);
      if (victim == r) {
        preempted_self = true;
        break;
      }
    }
    if (preempted_self) continue;
    append_slots(r);
    kept.push_back(r);
    add_decode(r, plan);
  }
  running_ = std::move(kept);
}

bool VllmScheduler::swap_in_groups(IterationPlan& plan) {
  if (plan.swap_out_blocks > 0) return !swapped_.empty();
  while (!swapped_.empty()) {
    Request* r = swapped_.front();
    if (r->preempted_now) break;
    const auto n_seqs = static_cast<std::int64_t>(r->seqs.size());
    const std::int64_t need = paged_->blocks_to_swap_in(r->seqs) + n_seqs;
    if (paged_->num_free_blocks() - need < watermark_blocks()) break;
    if (running_seqs_ + n_seqs > settings_.max_num_seqs) break;
    swapped_.pop_front();
    swap_in(r, plan);
    append_slots(r);
    add_decode(r, plan);
  }
  return !swapped_.empty();
}

void VllmScheduler::admit_waiting(double now, IterationPlan& plan, std::int64_t batched_tokens,
                                  std::int64_t token_limit, bool chunked) {
  while (!waiting_.empty()) {
    Request* r = waiting_.front();
    if (r->preempted_now) break;
    const std::int64_t tokens = r->prompt_tokens + r->generated;
    const std::int64_t chunk = chunked ? std::min(tokens, token_limit - batched_tokens) : tokens;
    if (chunk <= 0) break;
    const alloc::AdmitRequest a = admit_request(*r, 0, chunk);
    if (paged_->num_free_blocks() - paged_->blocks_to_admit(a) < watermark_blocks()) break;
    if (batched_tokens + chunk > token_limit) break;
    if (running_seqs_ + r->width() > settings_.max_num_seqs) break;
    waiting_.pop_front();
    if (!admit(r, now, chunk, plan)) {  // cannot happen after the checks above
      waiting_.push_front(r);
      break;
    }
    // A chunk spends the budget on the tokens it computes, not on its prefix-cache hits.
    batched_tokens += chunked ? plan.prefills.back().new_tokens : chunk;
  }
}

void VllmScheduler::schedule(double now, IterationPlan& plan) {
  plan.clear();
  reset_preempted_flags();
  reserve_running_slots(plan, nullptr);
  if (swap_in_groups(plan)) return;  // swapped groups are strictly served before waiting ones
  admit_waiting(now, plan, running_seqs_, settings_.max_num_batched_tokens, false);
}

}  // namespace pagesim::sim

#include "sim/scheduler/vllm_v1_scheduler.h"

#include <algorithm>
#include <cassert>
#include <memory>
#include <string>

#include <fmt/format.h>

namespace pagesim::sim {

std::unique_ptr<Scheduler> make_vllm_v1_scheduler(const SchedulerSettings& settings, PoolRef pool) {
  return std::make_unique<VllmV1Scheduler>(settings, pool.any());
}

std::string vllm_v1_pool_refusal(std::string_view found, std::string_view hint) {
  return fmt::format("scheduler.kind: vllm-v1 runs vLLM v1's paged block pool (free-block queue, prefix cache); {}set "
                     "allocator.kind: paged (or a layer-group pool: uniform, hybrid, jenga, vattention){}",
                     hint.empty() ? fmt::format("allocator.kind is '{}': ", found) : std::string(hint),
                     hint.empty() ? ", or use scheduler.kind: orca or static" : "");
}

VllmV1Scheduler::VllmV1Scheduler(const SchedulerSettings& settings, alloc::KvAllocator& allocator)
    : Scheduler(settings, allocator), pool_(allocator) {
  if (settings.speculative.enabled()) sampler_.emplace(settings.speculative);
}

std::int64_t VllmV1Scheduler::headroom_slots(const Request& r) const {
  return sampler_ && r.width() == 1 ? settings_.speculative.k + settings_.speculative.lookahead : 0;
}

bool VllmV1Scheduler::grow(Request* r, std::int64_t tokens) {
  if (r->in_prefill()) return pool_.grow(r->seqs.front(), tokens);
  if (speculates(r)) return grow_speculative(r, tokens - 1);
  return append_slots(r);
}

bool VllmV1Scheduler::grow_speculative(Request* r, std::int64_t proposed) {
  const std::int64_t accepted = sampler_->draw(proposed);
  const alloc::ProposedSlots slots{.proposed = proposed,
                                   .rejected = proposed - accepted,
                                   .lookahead = settings_.speculative.lookahead};
  if (!pool_.grow_proposed(r->seqs.front(), slots)) return false;
  r->spec_step = true;
  r->spec_proposed = proposed;
  r->spec_accepted = accepted;
  // The step emits its own token and the accepted proposals up to the request's last token:
  // vLLM's rejection sampler accepts past max_tokens, and output processing drops the rest.
  r->spec_emitted = 1 + std::min(accepted, std::max<std::int64_t>(0, r->output_tokens - r->generated - 1));
  return true;
}

std::int64_t VllmV1Scheduler::schedule_running(IterationPlan& plan, bool* preempted) {
  std::int64_t budget = settings_.max_num_batched_tokens;
  std::vector<Request*> running = spare_running();  // admission order: victims leave from the end
  running.assign(this->running().begin(), this->running().end());
  std::size_t next = 0;
  while (next < running.size() && budget > 0) {
    Request* r = running[next];
    const bool prefill = r->in_prefill();
    const auto width = static_cast<std::int64_t>(r->seqs.size());
    // A group decodes whole; alone in a step it may overrun a budget smaller than its width.
    if (!prefill && width > budget && next > 0) break;
    // A speculative decode verifies up to k proposals besides its token, as the budget allows.
    const std::int64_t tokens = prefill            ? std::min(prefill_cap(r->to_prefill - r->prefilled), budget)
                                : speculates(r) ? 1 + std::min(settings_.speculative.k, budget - 1)
                                                 : width;
    bool self_preempted = false;
    while (!grow(r, tokens)) {
      // Everything before `next` is planned; the victim is the newest admission, maybe r.
      Request* victim = running.back();
      running.pop_back();
      preempt(victim, plan);
      *preempted = true;
      if (victim == r) {
        self_preempted = true;
        break;
      }
    }
    if (self_preempted) break;
    if (prefill)
      plan.prefills.push_back({r, tokens, r->prefilled, r->prefilled + tokens == r->to_prefill, /*admitted=*/false});
    else
      add_decode(r, plan);
    budget = std::max<std::int64_t>(budget - tokens, 0);
    ++next;
  }
  set_running(std::move(running));
  return budget;
}

void VllmV1Scheduler::admit_waiting(double now, IterationPlan& plan, std::int64_t budget) {
  while (!waiting().empty() && budget > 0) {
    Request* r = waiting().front();
    if (adapter_blocked(r)) {  // vLLM v1 skips it: scheduling it would exceed max_loras
      defer_waiting_head();
      continue;
    }
    if (num_running_seqs() + r->width() > settings_.max_num_seqs) break;
    // PagedAllocator::can_admit is exactly blocks_to_admit <= num_free_blocks (allocate_slots's
    // test); a layer-group pool answers the same question for all of its tables at once.
    const std::int64_t chunk = prefill_cap(budget);
    const alloc::AdmitRequest a = admit_request(*r, 0, chunk);
    if (!pool_.can_admit(a) || !fits_with_adapter(a, r)) break;
    pop_waiting();
    [[maybe_unused]] const bool admitted = admit(r, now, chunk, plan);
    assert(admitted && "can_admit promised room");
    budget -= plan.prefills.back().new_tokens;
  }
  restore_deferred();
}

void VllmV1Scheduler::schedule(double now, IterationPlan& plan) {
  begin_iteration(plan);
  // vLLM 0.31.0 on counts self.running (a request retired by asynchronous scheduling still
  // in it) and the waiting queue when the step starts.
  const bool alone = static_cast<std::int64_t>(running().size()) + num_retired() +
                         static_cast<std::int64_t>(waiting().size()) <= 1;
  step_threshold_ = settings_.long_prefill_cap_needs_company && alone ? 0 : settings_.long_prefill_token_threshold;
  bool preempted = false;
  const std::int64_t budget = schedule_running(plan, &preempted);
  // vLLM v1 admits nothing in a step that preempted (`if not preempted_reqs:`).
  if (preempted) return;
  admit_waiting(now, plan, budget);
}

}  // namespace pagesim::sim

#include "sim/scheduler/vllm_scheduler.h"

#include <algorithm>
#include <cassert>

#include <fmt/format.h>

namespace pagesim::sim {

std::unique_ptr<Scheduler> make_vllm_scheduler(const SchedulerSettings& settings, PoolRef pool) {
  return std::make_unique<VllmScheduler>(settings, *pool.paged());
}
VllmScheduler::VllmScheduler(const SchedulerSettings& settings, alloc::PagedAllocator& allocator)
    : Scheduler(settings, allocator), paged_(allocator) {}

std::int64_t VllmScheduler::watermark_blocks() const {
  return static_cast<std::int64_t>(settings_.watermark * static_cast<double>(paged_.num_blocks()));
}

std::int64_t VllmScheduler::decode_repeat_free_slots(const IterationPlan& plan) const {
  // Every group has a sequence: as many sequences as groups means one each, and the
  // requests need not be read (a decode run's plan, at every finish in it).
  std::size_t widest = plan.decodes.empty() ? 0 : 1;
  if (plan.decode_seqs != static_cast<std::int64_t>(plan.decodes.size()))
    for (const Request* r : plan.decodes) widest = std::max(widest, r->seqs.size());
  assert(std::all_of(plan.decodes.begin(), plan.decodes.end(), [&](const Request* r) { return r->seqs.size() <= widest; }));
  return static_cast<std::int64_t>(widest) * paged_.block_size();
}

std::int64_t VllmScheduler::headroom_slots(const Request& r) const {
  return (r.width() + watermark_blocks()) * paged_.block_size();
}

bool VllmScheduler::try_swap_out(Request* r, IterationPlan& plan) {
  const bool multi = r->seqs.size() > 1;
  const bool want_swap = paged_.num_cpu_blocks() > 0 && !r->in_prefill() &&
                         (settings_.preemption == PreemptionMode::kSwap ||
                          (settings_.preemption == PreemptionMode::kAuto && multi));
  if (!want_swap) return false;
  auto moves = paged_.swap_out(r->seq_ids());
  if (!moves) return false;  // CPU pool full: recompute rather than stall the run
  plan.swap_out_blocks += static_cast<std::int64_t>(moves->size());
  r->swapped_blocks += static_cast<std::int64_t>(moves->size());
  ++plan.swap_preemptions;
  return true;
}

void VllmScheduler::reserve_running_slots(IterationPlan& plan, std::vector<Request*>* prefilling) {
  const std::vector<Request*>& running = this->running();
  std::vector<Request*> kept = spare_running();
  kept.reserve(running.size());
  std::size_t lo = 0, hi = running.size();
  while (lo < hi) {
    Request* r = running[lo++];
    if (r->in_prefill()) {
      kept.push_back(r);
      if (prefilling) prefilling->push_back(r);
      continue;
    }
    bool preempted_self = false;
    while (paged_.num_free_blocks() < static_cast<std::int64_t>(r->seqs.size())) {
      Request* victim = lo < hi ? running[--hi] : r;
      preempt(victim, plan);
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
  set_running(std::move(kept));
}

bool VllmScheduler::swap_in_groups(IterationPlan& plan) {
  if (plan.swap_out_blocks > 0) return !swapped().empty();
  while (!swapped().empty()) {
    Request* r = swapped().front();
    if (r->preempted_now) break;
    const auto n_seqs = static_cast<std::int64_t>(r->seqs.size());
    const std::vector<alloc::SeqId> ids = r->seq_ids();
    const std::int64_t need = paged_.blocks_to_swap_in(ids) + n_seqs;
    if (paged_.num_free_blocks() - need < watermark_blocks()) break;
    if (num_running_seqs() + n_seqs > settings_.max_num_seqs) break;
    pop_swapped();
    auto moves = paged_.swap_in(ids);
    plan.swap_in_blocks += static_cast<std::int64_t>(moves->size());
    r->swapped_blocks += static_cast<std::int64_t>(moves->size());
    insert_running(r);
    append_slots(r);
    add_decode(r, plan);
  }
  return !swapped().empty();
}

bool VllmScheduler::admits_after_decodes(std::int64_t appended_blocks) const {
  if (waiting().empty()) return false;
  if (adapters()) return true;  // adapter_blocked may skip the head: no promise
  // The head's checks as admit_waiting makes them in schedule() (chunked = false, batched
  // tokens = the running sequences). Its preempted_now mark, if any, is cleared by then.
  const Request* r = waiting().front();
  const std::int64_t tokens = r->prompt_tokens + r->generated;
  if (tokens <= 0) return false;
  const alloc::AdmitRequest a = admit_request(*r, 0, tokens);
  if (paged_.num_free_blocks() - appended_blocks - paged_.blocks_to_admit(a) - adapter_blocks_to_pin(r) <
      watermark_blocks())
    return false;
  if (num_running_seqs() + tokens > settings_.max_num_batched_tokens) return false;
  return num_running_seqs() + r->width() <= settings_.max_num_seqs;
}

void VllmScheduler::admit_waiting(double now, IterationPlan& plan, std::int64_t batched_tokens,
                                  std::int64_t token_limit, bool chunked) {
  while (!waiting().empty()) {
    Request* r = waiting().front();
    if (r->preempted_now) break;
    if (adapter_blocked(r)) {  // vLLM skips it: no slot for another adapter in this batch
      defer_waiting_head();
      continue;
    }
    const std::int64_t tokens = r->prompt_tokens + r->generated;
    const std::int64_t chunk = chunked ? std::min(tokens, token_limit - batched_tokens) : tokens;
    if (chunk <= 0) break;
    const alloc::AdmitRequest a = admit_request(*r, 0, chunk);
    if (paged_.num_free_blocks() - paged_.blocks_to_admit(a) - adapter_blocks_to_pin(r) < watermark_blocks()) break;
    if (batched_tokens + chunk > token_limit) break;
    if (num_running_seqs() + r->width() > settings_.max_num_seqs) break;
    pop_waiting();
    [[maybe_unused]] const bool admitted = admit(r, now, chunk, plan);
    assert(admitted && "the watermark check promised room");
    // A chunk spends the budget on the tokens it computes, not on its prefix-cache hits.
    batched_tokens += chunked ? plan.prefills.back().new_tokens : chunk;
  }
  restore_deferred();
}

void VllmScheduler::schedule(double now, IterationPlan& plan) {
  begin_iteration(plan);
  reserve_running_slots(plan, nullptr);
  if (swap_in_groups(plan)) return;  // swapped groups are strictly served before waiting ones
  admit_waiting(now, plan, num_running_seqs(), settings_.max_num_batched_tokens, false);
}

}  // namespace pagesim::sim

#include "sim/scheduler/scheduler.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

namespace pagesim::sim {
namespace {

std::int64_t blocks_for(std::int64_t tokens, std::int64_t bs) { return (tokens + bs - 1) / bs; }

bool arrives_before(const Request* a, const Request* b) {
  return a->arrival_s != b->arrival_s ? a->arrival_s < b->arrival_s : a->id < b->id;
}

}  // namespace

Scheduler::Scheduler(const SchedulerSettings& settings, alloc::KvAllocator& allocator)
    : settings_(settings), alloc_(allocator), paged_(dynamic_cast<alloc::PagedAllocator*>(&allocator)) {
  if (settings_.max_num_seqs < 1)
    throw std::invalid_argument(fmt::format("scheduler.max_num_seqs must be >= 1, got {}", settings_.max_num_seqs));
  if (settings_.max_num_batched_tokens < 1)
    throw std::invalid_argument(
        fmt::format("scheduler.max_num_batched_tokens must be >= 1, got {}", settings_.max_num_batched_tokens));
  if (settings_.watermark < 0 || settings_.watermark >= 1)
    throw std::invalid_argument(fmt::format("scheduler.watermark must be in [0, 1), got {}", settings_.watermark));
}

alloc::AdmitRequest Scheduler::admit_request(const Request& r, alloc::SeqId seq, std::int64_t chunk) const {
  alloc::AdmitRequest a;
  a.seq = seq;
  a.prompt_tokens = r.prompt_tokens;
  a.output_tokens = r.output_tokens;
  a.generated_tokens = r.generated;
  a.prompt_block_hashes = r.block_hashes;
  if (chunk < r.prompt_tokens + r.generated) {
    // Hold the first chunk only; the rest is appended chunk by chunk. The final length (and
    // so the accounting) is unchanged.
    a.prompt_tokens = chunk;
    a.generated_tokens = 0;
    a.output_tokens = r.final_tokens() - chunk;
    if (paged_) {
      auto full = static_cast<std::size_t>(chunk / paged_->block_size());
      a.prompt_block_hashes = a.prompt_block_hashes.first(std::min(full, a.prompt_block_hashes.size()));
    }
  }
  return a;
}

bool Scheduler::can_ever_schedule(const Request& r, std::string* why) const {
  alloc::AdmitRequest a = admit_request(r, 0);
  a.generated_tokens = 0;
  if (!alloc_.can_ever_admit(a)) {
    *why = fmt::format("it never fits the KV pool of {} slots with allocator {} (prompt {} + output {} tokens)",
                       alloc_.capacity_slots(), alloc_.name(), r.prompt_tokens, r.output_tokens);
    return false;
  }
  if (paged_) {
    // Most blocks the group ever holds: the full prompt blocks (shared), and per sequence a
    // copy of the partial last prompt block grown to prompt + output - 1 tokens; plus one
    // free block per sequence, which the conservative slot check demands even at the last
    // step — without it a request filling the pool would preempt itself forever.
    const std::int64_t bs = paged_->block_size();
    const std::int64_t w = r.width();
    const std::int64_t own = blocks_for(r.prompt_tokens % bs + std::max<std::int64_t>(r.output_tokens - 1, 0), bs);
    const std::int64_t worst = r.prompt_tokens / bs + w * own + w;
    if (worst + watermark_blocks() > paged_->num_blocks()) {
      *why = fmt::format("with {} sequence(s) it may need {} blocks (incl. one free per sequence) + {} watermark, "
                         "more than the pool's {}",
                         w, worst, watermark_blocks(), paged_->num_blocks());
      return false;
    }
  }
  // A recompute re-prefills prompt + generated tokens in one iteration unless prefill is chunked.
  if (settings_.kind != SchedulerKind::kSarathi && r.final_tokens() - 1 > settings_.max_num_batched_tokens) {
    *why = fmt::format("its prefill (up to {} tokens after a recompute) exceeds scheduler.max_num_batched_tokens = {}",
                       r.final_tokens() - 1, settings_.max_num_batched_tokens);
    return false;
  }
  return true;
}

void Scheduler::add_request(Request* r) {
  r->state = RequestState::kWaiting;
  waiting_.push_back(r);
}

std::int64_t Scheduler::watermark_blocks() const {
  return paged_ ? static_cast<std::int64_t>(settings_.watermark * static_cast<double>(paged_->num_blocks())) : 0;
}

void Scheduler::free_seq(alloc::SeqId seq) {
  alloc_.free(seq);
  if (observer_) observer_->on_freed(seq);
}

void Scheduler::insert_running(Request* r) {
  r->state = RequestState::kRunning;
  running_.insert(std::upper_bound(running_.begin(), running_.end(), r, arrives_before), r);
  running_seqs_ += static_cast<std::int64_t>(r->seqs.size());
}

bool Scheduler::admit(Request* r, double now, std::int64_t max_new_tokens, IterationPlan& plan) {
  const std::int64_t total = r->prompt_tokens + r->generated;
  const auto seq = static_cast<alloc::SeqId>(new_seq_id());
  const alloc::AdmitRequest a = admit_request(*r, seq, max_new_tokens);
  alloc::AdmitResult res = alloc_.admit(a);
  if (!res.admitted) return false;
  r->seqs.assign(1, seq);
  if (observer_) observer_->on_admitted(*r, seq);
  r->to_prefill = total;
  r->prefilled = res.cached_tokens;
  r->cached_tokens += res.cached_tokens;
  if (r->generated > 0) r->recomputed_tokens += total - res.cached_tokens;
  if (r->first_scheduled_s < 0) r->first_scheduled_s = now;
  const std::int64_t held = a.tokens_at_admission();
  plan.prefills.push_back({r, held - res.cached_tokens, res.cached_tokens, held == total});
  insert_running(r);
  return true;
}

bool Scheduler::can_append_slots(const Request& r) const {
  if (paged_) {
    std::int64_t need = 0;
    for (alloc::SeqId s : r.seqs) need += paged_->blocks_to_append(s, 1);
    return need <= paged_->num_free_blocks();
  }
  for (alloc::SeqId s : r.seqs)
    if (!alloc_.can_append(s, 1)) return false;
  return true;
}

bool Scheduler::append_slots(Request* r) {
  if (!can_append_slots(*r)) return false;
  for (alloc::SeqId s : r->seqs) {
    [[maybe_unused]] bool ok = alloc_.append(s, 1);
  }
  return true;
}

void Scheduler::add_decode(Request* r, IterationPlan& plan) {
  plan.decodes.push_back(r);
  plan.decode_seqs += static_cast<std::int64_t>(r->seqs.size());
}

void Scheduler::preempt(Request* r, IterationPlan& plan) {
  ++preemptions_total_;
  running_seqs_ -= static_cast<std::int64_t>(r->seqs.size());
  r->preempted_now = true;
  ++r->preemptions;
  const bool multi = r->seqs.size() > 1;
  // Only vllm/sarathi ever swap a group back in; the other policies recompute.
  const bool swaps_in = settings_.kind == SchedulerKind::kVllm || settings_.kind == SchedulerKind::kSarathi;
  const bool want_swap = swaps_in && paged_ && paged_->num_cpu_blocks() > 0 && !r->in_prefill() &&
                         (settings_.preemption == PreemptionMode::kSwap ||
                          (settings_.preemption == PreemptionMode::kAuto && multi));
  if (want_swap) {
    if (auto moves = paged_->swap_out(r->seqs)) {
      plan.swap_out_blocks += static_cast<std::int64_t>(moves->size());
      r->swapped_blocks += static_cast<std::int64_t>(moves->size());
      ++plan.swap_preemptions;
      r->state = RequestState::kSwapped;
      swapped_.insert(std::upper_bound(swapped_.begin(), swapped_.end(), r, arrives_before), r);
      return;
    }
    // CPU pool full: fall back to recompute rather than stall the run.
  }
  // Recompute: everything is freed; the request later re-prefills prompt + generated tokens
  // as one sequence and forks back to its width (see fork_to_width).
  for (alloc::SeqId s : r->seqs) free_seq(s);
  r->seqs.clear();
  r->to_prefill = r->prefilled = 0;
  ++r->recomputes;
  ++plan.recompute_preemptions;
  r->state = RequestState::kWaiting;
  waiting_.push_front(r);
}

void Scheduler::swap_in(Request* r, IterationPlan& plan) {
  auto moves = paged_->swap_in(r->seqs);
  plan.swap_in_blocks += static_cast<std::int64_t>(moves->size());
  r->swapped_blocks += static_cast<std::int64_t>(moves->size());
  insert_running(r);
}

std::vector<Request*> Scheduler::grow_running_or_recompute(IterationPlan& plan) {
  std::vector<Request*> kept, preempted;
  kept.reserve(running_.size());
  for (Request* r : running_) {
    if (append_slots(r)) {
      kept.push_back(r);
      add_decode(r, plan);
    } else {
      preempt(r, plan);
      preempted.push_back(r);
    }
  }
  running_ = std::move(kept);
  // Each preemption went to the front of waiting_, oldest first: restore arrival order.
  std::reverse(waiting_.begin(), waiting_.begin() + plan.recompute_preemptions);
  return preempted;
}

void Scheduler::admit_fcfs(double now, IterationPlan& plan, std::int64_t batched_tokens) {
  while (!waiting_.empty()) {
    Request* r = waiting_.front();
    if (r->preempted_now) break;
    const std::int64_t tokens = r->prompt_tokens + r->generated;
    if (batched_tokens + tokens > settings_.max_num_batched_tokens) break;
    if (running_seqs_ + r->width() > settings_.max_num_seqs) break;
    if (!alloc_.can_admit(admit_request(*r, 0))) break;
    waiting_.pop_front();
    admit(r, now, std::numeric_limits<std::int64_t>::max(), plan);
    batched_tokens += tokens;
  }
}

void Scheduler::on_finished(Request* r) {
  for (alloc::SeqId s : r->seqs) free_seq(s);
  running_seqs_ -= static_cast<std::int64_t>(r->seqs.size());
  r->seqs.clear();
  running_.erase(std::find(running_.begin(), running_.end(), r));
}

bool Scheduler::fork_to_width(Request* r) {
  const std::size_t first_new = r->seqs.size();
  while (r->seqs.size() < static_cast<std::size_t>(r->width())) {
    auto child = static_cast<alloc::SeqId>(new_seq_id());
    if (!alloc_.fork(r->seqs.front(), child)) {
      // No room for another copy (contiguous ranges): undo and recompute later.
      for (std::size_t i = first_new; i < r->seqs.size(); ++i) free_seq(r->seqs[i]);
      running_seqs_ -= static_cast<std::int64_t>(r->seqs.size() - first_new);
      r->seqs.resize(first_new);
      running_.erase(std::find(running_.begin(), running_.end(), r));
      IterationPlan scratch;
      preempt(r, scratch);
      r->preempted_now = false;
      return false;
    }
    if (observer_) observer_->on_forked(*r, r->seqs.front(), child);
    r->seqs.push_back(child);
    ++running_seqs_;
  }
  return true;
}

void Scheduler::reshape_beams(Request* r, const std::vector<std::int32_t>& parents) {
  std::vector<std::int32_t> picks(r->seqs.size(), 0);
  for (std::int32_t p : parents) ++picks[static_cast<std::size_t>(p)];
  std::vector<alloc::SeqId> next;
  next.reserve(parents.size());
  // Free the dead beams first so that their blocks are back before any copy-on-write.
  for (std::size_t i = 0; i < r->seqs.size(); ++i)
    if (picks[i] == 0) free_seq(r->seqs[i]);
  for (std::size_t i = 0; i < r->seqs.size(); ++i) {
    if (picks[i] == 0) continue;
    next.push_back(r->seqs[i]);
    for (std::int32_t k = 1; k < picks[i]; ++k) {
      auto child = static_cast<alloc::SeqId>(new_seq_id());
      if (!alloc_.fork(r->seqs[i], child)) throw SimulationError("beam fork failed: beam search needs a paged allocator");
      if (observer_) observer_->on_forked(*r, r->seqs[i], child);
      next.push_back(child);
    }
  }
  r->seqs = std::move(next);
}

}  // namespace pagesim::sim

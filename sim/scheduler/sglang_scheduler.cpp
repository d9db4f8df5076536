#include "sim/scheduler/sglang_scheduler.h"

#include <algorithm>
#include <cassert>
#include <memory>
#include <string>
#include <limits>
#include <vector>

#include <fmt/format.h>

namespace pagesim::sim {

std::unique_ptr<Scheduler> make_sglang_scheduler(const SchedulerSettings& settings, PoolRef pool) {
  return std::make_unique<SglangScheduler>(settings, *pool.radix());
}

std::string sglang_pool_refusal(std::string_view found, std::string_view /*hint*/) {
  return fmt::format("scheduler.kind: sglang runs over SGLang's radix-tree cache; found allocator.kind '{}': set "
                     "allocator.kind: radix (or leave it out)",
                     found);
}

SglangScheduler::SglangScheduler(const SchedulerSettings& settings, alloc::RadixAllocator& allocator)
    : Scheduler(settings, allocator), radix_(allocator) {}

std::int64_t SglangScheduler::matched_tokens(const Request& r) const {
  const std::int64_t page = radix_.block_size();
  const std::int64_t tokens = r.prompt_tokens + r.generated;
  return std::min(radix_.match_pages(r.block_hashes, batch_clock_) * page, (tokens - 1) / page * page);
}

double SglangScheduler::running_reservation() const {
  double tokens = 0;
  for (const Request* r : running())
    if (!r->in_prefill())
      tokens += static_cast<double>(std::min(r->output_tokens - r->generated, sglang::kClipMaxNewTokens)) *
                new_token_ratio_;
  return tokens;
}

alloc::AdmitResult SglangScheduler::allocate_admission(const alloc::AdmitRequest& a, const Request&) {
  return radix_.admit_matched(a, admit_hit_pages_);
}

void SglangScheduler::schedule(double now, IterationPlan& plan) {
  begin_iteration(plan);
  // Requests that finished in the last step. After a prefill step they leave SGLang's batch
  // before this prefill attempt (get_next_batch_to_run filters last_batch, and so does
  // excluding a chunked request from it); after a decode step only when the next
  // update_running_batch filters the running batch. Either shrink clears batch_is_full.
  const bool shrank = running().size() < running_after_;
  if (last_was_prefill_ && (shrank || last_had_chunk_)) batch_is_full_ = false;
  if (!last_was_prefill_ && shrank) finished_unfiltered_ = true;
  schedule_prefill(now, plan);
  if (plan.prefills.empty()) {  // decodes wait for a prefill batch (no mixed batches)
    schedule_decode(plan);
    // Filtering left nothing to decode: SGLang's next loop pass (an empty step, no time)
    // tries the prefill again with the batch no longer full.
    if (plan.decodes.empty() && plan.preempted.empty()) schedule_prefill(now, plan);
  }
  last_was_prefill_ = !plan.prefills.empty();
  last_had_chunk_ = std::any_of(plan.prefills.begin(), plan.prefills.end(),
                                [](const PrefillWork& w) { return !w.completes; });
  running_after_ = running().size();
}

void SglangScheduler::schedule_prefill(double now, IterationPlan& plan) {
  const std::int64_t page = radix_.block_size();
  std::int64_t budget = settings_.max_num_batched_tokens;
  double reserved = running_reservation();
  auto room = [&] { return static_cast<double>(radix_.num_available_pages() * page) - reserved; };
  batch_clock_ = radix_.clock();

  // The request in a chunked prefill goes first (PrefillAdder.add_chunked_req).
  bool chunk_in_progress = false;
  for (Request* r : running()) {
    if (!r->in_prefill()) continue;
    const std::int64_t remaining = r->to_prefill - r->prefilled;
    std::int64_t chunk = std::min(budget, remaining);
    chunk = std::min(chunk, static_cast<std::int64_t>(std::max(0.0, room())));
    const bool last = chunk == remaining;
    if (!last) chunk = chunk / page * page;  // cut at a page boundary, so its pages can join the tree
    chunk_in_progress = !last;
    if (chunk > 0 && radix_.append(r->seqs.front().id, chunk)) {
      plan.prefills.push_back({r, chunk, r->prefilled, last, /*admitted=*/false});
      budget -= chunk;
      // _update_prefill_budget: one page of overhead, and min(max_new_tokens, 4096) once the
      // last chunk is in (add_chunked_req).
      reserved += static_cast<double>(page + (last ? std::min(r->output_tokens, sglang::kClipMaxNewTokens) : 0));
    } else {
      chunk_in_progress = true;
    }
    break;  // one request at a time is in a chunked prefill
  }

  // A full running batch tries no waiting request until it shrinks (see schedule()).
  if (waiting().empty() || batch_is_full_) return;
  if (num_running_seqs() >= settings_.max_num_seqs) {
    batch_is_full_ = true;  // get_num_allocatable_reqs <= 0
    return;
  }
  // Matches count only pages inserted before this batch (batch_clock_): a page this batch
  // inserts is computed by it, not hit by another request of the same batch. lpm matches
  // the whole queue to sort it; fcfs matches each request as admission reaches it.
  const bool lpm = settings_.schedule_policy == SchedulePolicy::kLpm && waiting().size() <= sglang::kLpmMaxQueue;
  if (lpm) {
    // SchedulePolicy._compute_prefix_matches: in queue order, a request matching at most
    // 32 tokens in the tree is matched against the waiting requests seen before it that
    // were so too; sharing >= 32 tokens with one of them, it is deprioritised (its prefix
    // is computed once, by the other, and hit later), else its keys join that set.
    // Chained keys make "shares >= 32 tokens" one lookup: the key of its 32nd token's page.
    matched_pages_.clear();
    in_batch_keys_.clear();
    deprioritized_.clear();
    const std::int64_t check_pages = (sglang::kInBatchPrefixTokens + page - 1) / page;
    for (const Request* r : waiting()) {
      const std::int64_t matched = matched_tokens(*r);
      matched_pages_[r] = matched / page;
      if (matched > sglang::kInBatchPrefixTokens) continue;
      const auto& keys = r->block_hashes;
      if (static_cast<std::int64_t>(keys.size()) >= check_pages &&
          in_batch_keys_.count(keys[static_cast<std::size_t>(check_pages - 1)]) != 0) {
        deprioritized_.insert(r);
      } else {
        in_batch_keys_.insert(keys.begin(), keys.end());
      }
    }
    // _sort_by_longest_prefix: longest match first, the deprioritised last (stable).
    auto rank = [this](const Request* r) {
      return deprioritized_.count(r) != 0 ? std::numeric_limits<std::int64_t>::max() : -matched_pages_[r];
    };
    reorder_waiting([&rank](const Request* a, const Request* b) { return rank(a) < rank(b); });
  }

  while (!waiting().empty() && budget > 0) {
    Request* r = waiting().front();
    if (r->preempted_now) break;
    if (num_running_seqs() + r->width() > settings_.max_num_seqs) {
      batch_is_full_ = true;
      break;
    }
    const std::int64_t total = r->prompt_tokens + r->generated;
    // The match the sort saw, unless an admission before r in this step evicted part of it
    // (its path is not locked until r is taken).
    const std::int64_t now_matched = matched_tokens(*r) / page;
    const std::int64_t matched_pages = lpm ? std::min(matched_pages_[r], now_matched) : now_matched;
    const std::int64_t matched = matched_pages * page;
    const std::int64_t extend = total - matched;
    const std::int64_t output = std::min(r->output_tokens - r->generated, sglang::kClipMaxNewTokens);
    // add_one_req: with its matched path locked (no longer evictable), extend + min(remaining
    // output, 4096) + one page must stay below rem_total_tokens, else NO_TOKEN: the batch is
    // full. With nothing running, the head only needs its pages (else a request as large as
    // the pool would wait forever behind the reservation estimate).
    const std::int64_t locked = radix_.unreferenced_matched_pages(r->block_hashes, matched_pages) * page;
    if (!running().empty() && static_cast<double>(extend + output + page) >= room() - static_cast<double>(locked)) {
      batch_is_full_ = true;
      break;
    }
    // The tokens computed now, after the matched ones (all of them, or a chunk cut at a page).
    std::int64_t chunk = extend;
    if (extend > budget) {
      if (chunk_in_progress) break;
      chunk = budget / page * page;
      if (chunk <= 0) break;
    }
    const alloc::AdmitRequest a = admit_request(*r, 0, chunk);
    if (radix_.pages_to_admit(a, matched_pages) > radix_.num_available_pages()) {
      batch_is_full_ = true;
      break;
    }
    pop_waiting();
    admit_hit_pages_ = matched_pages;
    [[maybe_unused]] const bool admitted = admit(r, now, chunk, plan);
    assert(admitted && "pages_to_admit promised room");
    const PrefillWork& w = plan.prefills.back();
    budget -= w.new_tokens;
    // _update_prefill_budget: min(max_new_tokens, 4096) + one page (a chunk: the page only).
    reserved += static_cast<double>(page + (w.completes ? std::min(r->output_tokens, sglang::kClipMaxNewTokens) : 0));
    if (!w.completes) chunk_in_progress = true;
    // budget_state: nothing left of rem_total_tokens is NO_TOKEN too.
    if (room() <= 0) {
      batch_is_full_ = true;
      break;
    }
  }
}

void SglangScheduler::schedule_decode(IterationPlan& plan) {
  // update_running_batch: filtering the finished (or an empty batch) clears batch_is_full.
  if (finished_unfiltered_ || running().empty()) batch_is_full_ = false;
  finished_unfiltered_ = false;
  std::vector<Request*> decoding;
  for (Request* r : running())
    if (!r->in_prefill()) decoding.push_back(r);
  if (decoding.empty()) return;
  auto fits = [&] {
    std::int64_t need = 0;
    for (const Request* r : decoding)
      for (const alloc::SeqHandle& s : r->seqs) need += radix_.pages_to_append(s.id, 1);
    return need <= radix_.num_available_pages();
  };
  if (!fits()) {
    // retract_decode: the last of (most generated, then shortest prompt) goes first.
    std::stable_sort(decoding.begin(), decoding.end(), [](const Request* a, const Request* b) {
      return a->generated != b->generated ? a->generated > b->generated : a->prompt_tokens < b->prompt_tokens;
    });
    // Retract at least one, then while the next decode step does not fit; always keep one.
    std::size_t retracted = 0;
    while (decoding.size() > 1 && (retracted == 0 || !fits())) {
      Request* victim = decoding.back();
      decoding.pop_back();
      preempt_running(victim, plan);
      ++retracted;
    }
    // update_running_batch -> _add_request_to_queue: each retracted request is appended;
    // the batch shrank, so it is no longer full.
    requeue_preempted_at_back(retracted);
    batch_is_full_ = false;
    // NewTokenRatioTracker.estimate_new_token_ratio_after_retract over the requests kept.
    std::int64_t generated = 0, outputs = 0;
    for (const Request* r : decoding) {
      generated += r->generated;
      outputs += r->output_tokens;
    }
    const auto kept = static_cast<std::int64_t>(decoding.size());
    new_token_ratio_ = std::min(1.0, static_cast<double>(generated + sglang::kRetractDecodeSteps * kept) /
                                         static_cast<double>(outputs + 1));
  } else {
    new_token_ratio_ = std::max(new_token_ratio_ - sglang::kNewTokenRatioDecay, sglang::kMinNewTokenRatio);
  }
  for (Request* r : running()) {
    if (r->in_prefill()) continue;
    [[maybe_unused]] const bool grown = append_slots(r);
    assert(grown && "retraction left room for every decode");
    add_decode(r, plan);
  }
}

}  // namespace pagesim::sim

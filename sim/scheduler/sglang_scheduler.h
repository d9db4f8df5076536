// SglangScheduler: SGLang's scheduling loop over its radix-tree KV cache (RadixAllocator).
//
// Each iteration is a prefill batch when one can be formed, else a decode of every running
// request (SGLang Scheduler.get_next_batch_to_run without mixed chunks: get_new_batch_prefill
// first, update_running_batch otherwise). Rules and their sources (sgl-project/sglang,
// python/sglang/srt/):
//   ordering   managers/schedule_policy.py, SchedulePolicy.calc_priority: with `lpm` the
//              waiting queue is stably sorted by longest cached prefix (match_prefix of each
//              request, made before any admission of the iteration), except that a
//              request matching <= 32 tokens that shares >= 32 tokens with an earlier such
//              waiting request goes last (_compute_prefix_matches, in-batch prefix
//              caching); beyond 128 waiting requests LPM turns into FCFS
//              (_determine_active_policy). `fcfs` keeps queue order.
//   admission  schedule_policy.py, PrefillAdder: a request in a chunked prefill continues
//              first (add_chunked_req); then waiting requests in order while running
//              requests < max_num_seqs and the prefill budget (chunked_prefill_size, here
//              max_num_batched_tokens) lasts; a request is taken only when its uncached
//              tokens + min(remaining output, 4096) + one page stay strictly below
//              available + evictable tokens (its matched path locked, so not evictable)
//              minus the reservation of running requests (remaining output ×
//              new_token_ratio) and of those admitted before it (add_one_req,
//              rem_total_tokens; _update_prefill_budget charges each admitted one
//              min(max_new_tokens, 4096) + one page beside its pages); a request longer
//              than the remaining budget is cut at a page boundary and becomes the one
//              chunked request. Admission stops at the first request refused.
//   full batch scheduler.py, _get_new_batch_prefill_raw: a refusal for memory (NO_TOKEN) or
//              for max_num_seqs marks the running batch full (batch_is_full), and no
//              waiting request is tried until the batch shrinks: a prefill step's finished
//              or chunked requests clear it at the next step (get_next_batch_to_run filters
//              last_batch); a decode step's finished requests only at the next
//              update_running_batch, after that step's prefill attempt, so admission
//              resumes one step late; a retraction clears it too.
//   decode     managers/schedule_batch.py, ScheduleBatch.check_decode_mem / retract_decode:
//              every running request needs its next token's page (cached pages are evicted
//              for it); if they do not fit, at least one request is retracted (recompute
//              preemption, nothing inserted into the tree), in order of fewest generated
//              tokens, then longest prompt, and more while the next decode step still does
//              not fit, keeping one; the retracted rejoin the back of the waiting queue in
//              that order (scheduler.py, update_running_batch -> _add_request_to_queue).
//              new_token_ratio is then reset to min(1, (generated + 20 × kept) /
//              (Σ max_new_tokens + 1)) over the kept requests
//              (NewTokenRatioTracker.estimate_new_token_ratio_after_retract), and otherwise
//              decays by (0.7 − 0.098) / 600 per decode step from 0.7 to 0.098
//              (global_config / environment defaults: init 0.7, min factor 0.14, 600 steps).
// max_new_tokens is the request's true output length (SGLang's benchmarks set it so).
// Not modelled: the separate max_prefill_tokens budget,
// mixed prefill/decode batches, priority scheduling, release_req's eager eviction of
// 20 × remaining tokens after each retraction (the pool here evicts on demand).
// Requests leave the waiting queue only through pop_waiting() and rejoin it through
// preempt(), so the allocator's pending-prefix holds follow the queue; lpm's sort only
// permutes it (the radix pool ignores the holds; waiting_prefix_test counts them).
// Borrows the RadixAllocator. Not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "allocator/radix/radix_allocator.h"
#include "sim/scheduler/scheduler.h"
#include "sim/scheduler/scheduler_kind.h"

namespace pagesim::sim {

// SGLang's constants (see above); kept together.
namespace sglang {
inline constexpr std::int64_t kClipMaxNewTokens = 4096;  // CLIP_MAX_NEW_TOKENS_ESTIMATION
inline constexpr std::int64_t kRetractDecodeSteps = 20;  // global_config.retract_decode_steps
inline constexpr double kInitNewTokenRatio = 0.7;
inline constexpr double kMinNewTokenRatio = 0.7 * 0.14;
inline constexpr double kNewTokenRatioDecay = (kInitNewTokenRatio - kMinNewTokenRatio) / 600;
inline constexpr std::size_t kLpmMaxQueue = 128;  // beyond it lpm falls back to fcfs
// IN_BATCH_PREFIX_CACHING_CHECK_THRESHOLD and _DEPRIORITIZE_THRESHOLD (both 32 tokens).
inline constexpr std::int64_t kInBatchPrefixTokens = 32;
}  // namespace sglang

class SglangScheduler final : public Scheduler {
 public:
  SglangScheduler(const SchedulerSettings& settings, alloc::RadixAllocator& allocator);
  void schedule(double now, IterationPlan& plan) override;

  double new_token_ratio() const { return new_token_ratio_; }

 private:
  // get_new_batch_prefill: fills plan.prefills (possibly nothing).
  void schedule_prefill(double now, IterationPlan& plan);
  // update_running_batch: retracts if needed, then decodes every running request.
  void schedule_decode(IterationPlan& plan);
  // Tokens of r's prompt + generated found in the tree before this iteration's prefill
  // batch inserted any page (at most all but the last).
  std::int64_t matched_tokens(const Request& r) const;
  // Tokens the running requests are expected to still generate (rem_total_token_offset).
  double running_reservation() const;
  alloc::AdmitResult allocate_admission(const alloc::AdmitRequest& a, const Request& r) override;

  alloc::RadixAllocator& radix_;
  double new_token_ratio_ = sglang::kInitNewTokenRatio;
  // The radix pool's clock when this iteration's prefill batch started: pages inserted
  // later are computed by this batch, not hits for another of its requests.
  std::uint64_t batch_clock_ = 0;
  // lpm: pages matched per waiting request, for the sort; the page keys of the waiting
  // requests checked for in-batch sharing (waiting_queue_radix_tree) and those found to
  // share a prefix with an earlier one.
  std::unordered_map<const Request*, std::int64_t> matched_pages_;
  std::unordered_set<alloc::BlockHash> in_batch_keys_;
  std::unordered_set<const Request*> deprioritized_;
  // The hits the admission in progress may take (allocate_admission).
  std::int64_t admit_hit_pages_ = 0;
  // running_batch.batch_is_full: set when admission meets NO_TOKEN or max_num_seqs; no
  // waiting request is tried until the running batch shrinks.
  bool batch_is_full_ = false;
  // Requests a decode step finished that SGLang's next update_running_batch filters.
  bool finished_unfiltered_ = false;
  // The last step: a prefill (and whether it left a chunk unfinished), and how many
  // requests ran after it was planned.
  bool last_was_prefill_ = false;
  bool last_had_chunk_ = false;
  std::size_t running_after_ = 0;
};

// scheduler.kind: sglang, over the radix pool only (implied, with pages of 1 token); refuses swap.
inline constexpr std::array<alloc::AllocatorKind, 1> kSglangPools = {alloc::AllocatorKind::kRadix};
std::unique_ptr<Scheduler> make_sglang_scheduler(const SchedulerSettings& settings, PoolRef pool);
// The refusal of a pool other than radix (SchedulerDescriptor::pool_refusal).
std::string sglang_pool_refusal(std::string_view found, std::string_view hint);
inline constexpr SchedulerDescriptor kSglangSchedulerKind = {
    .kind = SchedulerKind::kSglang,
    .name = "sglang",
    .summary = "SGLang: radix cache, cache-aware (lpm) or fcfs order",
    .traits = {.chunked_prefill = true},
    .allocators = kSglangPools,
    .drives = PoolInterface::kRadix,
    .pool_check = PoolCheck::kAfterSwapSpace,
    .pool_refusal = &sglang_pool_refusal,
    .default_block_size = 1,  // SGLang's page_size
    .swap_refusal = "sglang retracts requests by recompute only (their cached prefix stays in the radix tree); set "
                    "scheduler.preemption: auto or recompute",
    .reads_schedule_policy = true,
    .build = &make_sglang_scheduler,
};

}  // namespace pagesim::sim

// SchedulerSettings: which batching policy runs and its limits. Defaults are the vLLM
// paper artifact's (2,560 batched tokens and 256 sequences per iteration, 1% watermark).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <utility>

#include "sim/core/speculative_settings.h"

namespace pagesim::sim {

enum class SchedulerKind {
  kStatic,   // FasterTransformer-like: a batch runs to completion before the next starts
  kOrca,     // iteration-level batching over a contiguous (reserving) allocator
  kVllm,     // continuous batching over the paged allocator, FCFS, preemption
  kSarathi,  // vllm plus chunked prefill under a per-iteration token budget
  kVllmV1,   // vLLM v1: one token budget over running then waiting, prefix cache on
  kVllmV0,   // vLLM 0.2-0.5: prefill-only iterations whenever a waiting group can be admitted
  kSglang,   // SGLang: radix-tree prefix cache, cache-aware order, chunked prefill, retraction
};

// sglang: the order of the waiting queue (SGLang's --schedule-policy).
enum class SchedulePolicy {
  kLpm,   // longest cached prefix first (FCFS beyond 128 waiting requests, as SGLang does)
  kFcfs,  // queue order: arrival, retracted requests in front
};

enum class PreemptionMode {
  kAuto,       // recompute single-sequence groups, swap multi-sequence groups (vLLM)
  kRecompute,  // free the blocks; the request re-prefills prompt + generated tokens later
  kSwap,       // move the blocks to the CPU pool and back (paged allocators only)
};

// The names configs write (a std::array of pairs, the form of every name table).
inline constexpr std::array<std::pair<SchedulerKind, std::string_view>, 7> kSchedulerKindNames = {{
    {SchedulerKind::kStatic, "static"},
    {SchedulerKind::kOrca, "orca"},
    {SchedulerKind::kVllm, "vllm"},
    {SchedulerKind::kSarathi, "sarathi"},
    {SchedulerKind::kVllmV1, "vllm-v1"},
    {SchedulerKind::kVllmV0, "vllm-v0"},
    {SchedulerKind::kSglang, "sglang"},
}};

inline constexpr std::array<std::pair<SchedulePolicy, std::string_view>, 2> kSchedulePolicyNames = {{
    {SchedulePolicy::kLpm, "lpm"},
    {SchedulePolicy::kFcfs, "fcfs"},
}};

inline constexpr std::array<std::pair<PreemptionMode, std::string_view>, 3> kPreemptionModeNames = {{
    {PreemptionMode::kAuto, "auto"},
    {PreemptionMode::kRecompute, "recompute"},
    {PreemptionMode::kSwap, "swap"},
}};

// The most planned steps a request may wait behind (async_steps): a bound on a setting, far
// above vLLM's 1.
inline constexpr std::int64_t kMaxAsyncSteps = 8;

struct SchedulerSettings {
  SchedulerKind kind = SchedulerKind::kVllm;
  std::int64_t max_num_batched_tokens = 2560;  // tokens per iteration (prefill + decode)
  std::int64_t max_num_seqs = 256;             // running sequences (static: batch size)
  double watermark = 0.01;  // vllm/sarathi: fraction of blocks left free after an admission;
                            // higher = fewer preemptions, fewer requests in flight
  PreemptionMode preemption = PreemptionMode::kAuto;
  std::int64_t chunk_tokens = 512;  // sarathi: token budget per iteration (decodes + chunks)
  // sglang: waiting-queue order. (sglang's prefill budget per iteration, SGLang's
  // chunked_prefill_size, is max_num_batched_tokens.)
  SchedulePolicy schedule_policy = SchedulePolicy::kLpm;
  // Asynchronous scheduling (vLLM's async_scheduling, vllm/config/scheduler.py, on by default
  // since v0.14 without pipeline parallelism): the engine plans step k+1 while step k runs, so
  // a request that arrives while a step is in flight is first seen after that step ends and
  // joins the step after the one already planned. async_steps is how many planned steps it
  // waits behind: 0 = synchronous (plan, run, plan: the default, every scheduler before it),
  // 1 = vLLM's async scheduling (a batch queue of depth 2). A request arriving at an idle
  // engine is planned at once either way. Applied by the engine (simulation.cpp).
  std::int64_t async_steps = 0;  // in [0, kMaxAsyncSteps]
  // vllm-v1: the most tokens one request's prefill may compute in a step, below the token
  // budget (vLLM's long_prefill_token_threshold, vllm/config/scheduler.py; applied to running
  // and waiting requests alike in Scheduler.schedule); 0 = off (vLLM's default).
  std::int64_t long_prefill_token_threshold = 0;
  // vllm-v1: the cap above applies only while more than one request is running or waiting
  // (vLLM 0.31.0 and later: sim/core/vllm_version.h). Set by the experiment from the key
  // `vllm_version`; not a key of this section.
  bool long_prefill_cap_needs_company = false;
  // Encoder tokens every request carries (AdmitRequest::encoder_tokens): the experiment sets
  // it from the model's cross-attention group (ModelLayerGroup::encoder_tokens, one image of
  // the preset's size per request); 0 for a model without one. Not a config key.
  std::int64_t encoder_tokens = 0;
  // Speculative decoding (config section `speculative`; vllm-v1 only, the config checks it).
  SpeculativeSettings speculative;
};

// What a policy is, as far as the mechanics shared by every policy need to know (which pools
// it runs over and what it supports: SchedulerDescriptor, sim/scheduler/scheduler_kind.h).
struct SchedulerTraits {
  // Prefills may be split over iterations, so no prefill (a recompute's included) has to
  // fit one iteration's token budget.
  bool chunked_prefill = false;
  // Prefix-cache hits are whole blocks that leave the last token to compute
  // (AdmitRequest::whole_block_hits, vLLM v1); else all but the last token may hit.
  bool whole_block_prefix_hits = false;
  // Decode runs (docs/engine.md): after an iteration that decodes every running request and
  // does nothing else, the policy plans the same decodes again as long as nothing changes but
  // the decoding sequences' lengths and the free memory their growth takes (no arrival, no
  // finished request, no memory freed), as long as Scheduler::decode_repeat_free_slots stay
  // free; and a request joining the back of a non-empty waiting queue changes none of those
  // plans (admission is first come, first served: it stops at a head that does not fit). Its
  // decisions read queues, counts and free memory (admission fails the more, the less is
  // free), never the iteration's number, the time or the tokens generated. False: sglang (its new-token ratio
  // decays every iteration and its reservation reads the tokens generated).
  bool repeats_decode_plans = false;
  // A recompute preemption leaves the request's computed blocks cached, generated tokens
  // included, so its re-admission hits what was not evicted meanwhile: vLLM v1 hashes every
  // full block of a request (Request.append_output_token_ids extends block_hashes) and caches
  // it once computed (KVCacheManager.allocate_slots -> cache_blocks), and _preempt_request
  // only frees them. Needs a prefix-caching pool that can (KvAllocator::cache_computed_blocks).
  bool caches_preempted_blocks = false;
};

// The value's name in its table above; "?" for a value outside the enum.
constexpr std::string_view to_string(SchedulerKind k) {
  for (const auto& [kind, name] : kSchedulerKindNames)
    if (kind == k) return name;
  return "?";
}
constexpr std::string_view to_string(SchedulePolicy p) {
  for (const auto& [policy, name] : kSchedulePolicyNames)
    if (policy == p) return name;
  return "?";
}
constexpr std::string_view to_string(PreemptionMode m) {
  for (const auto& [mode, name] : kPreemptionModeNames)
    if (mode == m) return name;
  return "?";
}

}  // namespace pagesim::sim

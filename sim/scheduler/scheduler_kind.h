// SchedulerDescriptor: one scheduler.kind and the rules it brings, as data: the allocator
// kinds it runs over (the first its default), the settings it implies, what it supports, and
// its factory. Each policy's header defines its own descriptor (a constexpr value);
// sim/scheduler/scheduler_kinds.h lists the built-in ones. Generic code reads descriptors
// only: make_scheduler (the one factory), the config's checks and implied defaults
// (sim/config/kind_rules.h) and the experiment's pairing of pool and policy, so adding a
// policy is its own files plus one line in that list. Descriptors are constants: safe to
// share between threads.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "allocator/make_allocator.h"
#include "sim/scheduler/pool_ref.h"
#include "sim/scheduler/scheduler_settings.h"

namespace pagesim::sim {

class Scheduler;

// Every allocator kind, in the order of alloc::kAllocatorKindNames: the pools of a policy that
// needs only the KvAllocator interface (its default the first, paged).
inline constexpr auto kEveryAllocatorKind = [] {
  std::array<alloc::AllocatorKind, alloc::kAllocatorKindNames.size()> kinds{};
  for (std::size_t i = 0; i < kinds.size(); ++i) kinds[i] = alloc::kAllocatorKindNames[i].first;
  return kinds;
}();

// When the config refuses an allocator.kind outside SchedulerDescriptor::allocators, and
// scheduler.preemption: swap where the policy refuses it (swap_refusal). The parse-time
// points keep the order in which a file with several faults has always had them reported.
enum class PoolCheck {
  kWithPoolKeys,     // parsing, with the pool's own keys: before swap space and offload tiers
  kAfterSwapSpace,   // parsing, after the swap space and offload tiers are checked
  // Building the run, not parsing: a sweep point that parses but cannot be built fails
  // before any point runs, naming the point (sim/experiment/experiment.h).
  kAtBuild,
};

struct SchedulerDescriptor {
  SchedulerKind kind;
  std::string_view name;     // scheduler.kind's value; the built-in kinds' as in kSchedulerKindNames
  std::string_view summary;  // the system whose rules it follows, in a line (`pagesim presets`)
  SchedulerTraits traits;
  // The allocator kinds it runs over; the first is implied when allocator.kind is left out.
  // A pool outside it is refused at pool_check, or earlier when the pool itself refuses the
  // policy (a layer-group pool refuses every policy that drives more than KvAllocator).
  std::span<const alloc::AllocatorKind> allocators;
  PoolInterface drives = PoolInterface::kKvAllocator;  // what `build` needs of the pool
  PoolCheck pool_check = PoolCheck::kAtBuild;
  // The refusal of a pool outside `allocators`, naming it (`found`) and saying, when the pool
  // belongs to another policy, whose it is (`hint`: AllocatorDescriptor::owner_note, to be
  // followed by the ways out). Null: "scheduler.kind 'K' needs the A allocator, found 'F'".
  std::string (*pool_refusal)(std::string_view found, std::string_view hint) = nullptr;
  // allocator.block_size implied over its default allocator (allocators[0]) when the file
  // gives none; 0: the allocator's default.
  std::int64_t default_block_size = 0;
  // allocator.prefix_cache left out turns the cache on where the pool has an optional one and
  // the workload carries token identities (vLLM v1 caches prefixes by default).
  bool prefix_cache_by_default = false;
  // The pool keeps one free-block queue across its block pools (vLLM v1's
  // FreeKVCacheBlockQueue: AllocatorSpec::single_free_queue).
  bool single_free_queue = false;
  bool lora = false;         // LoRA adapters: admission by adapter residency (lora section)
  bool speculation = false;  // speculative decoding (speculative section)
  // Non-empty: the whole message refusing scheduler.preemption: swap (the policy preempts by
  // recompute only). Empty: swap is taken (a pool without a swap pool recomputes).
  std::string_view swap_refusal = {};
  // Keys of the scheduler section only some policies read; the others refuse them.
  bool reads_chunk_tokens = false;               // scheduler.chunk_tokens
  bool reads_schedule_policy = false;            // scheduler.schedule_policy
  bool reads_long_prefill_token_threshold = false;  // scheduler.long_prefill_token_threshold
  // Builds the policy over `pool`. REQUIRES: pool.offers(drives) (make_scheduler checks).
  std::unique_ptr<Scheduler> (*build)(const SchedulerSettings& settings, PoolRef pool) = nullptr;
};

// Whether `d` runs over pools of kind `a`.
constexpr bool runs_over(const SchedulerDescriptor& d, alloc::AllocatorKind a) {
  for (alloc::AllocatorKind k : d.allocators)
    if (k == a) return true;
  return false;
}

// The descriptor of `kind` in `kinds`, or null.
constexpr const SchedulerDescriptor* find_scheduler_kind(std::span<const SchedulerDescriptor> kinds,
                                                         SchedulerKind kind) {
  for (const SchedulerDescriptor& d : kinds)
    if (d.kind == kind) return &d;
  return nullptr;
}

}  // namespace pagesim::sim

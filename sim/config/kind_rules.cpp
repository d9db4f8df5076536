#include "sim/config/kind_rules.h"

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "sim/config/config_error.h"

namespace pagesim::sim {

namespace {

// The allocator kinds `policy` runs over, in its order, by their names in `kinds`, as
// or_list words them.
std::string pools_of(const ServingKinds& kinds, const SchedulerDescriptor& policy) {
  std::vector<std::string_view> names;
  for (const alloc::AllocatorKind a : policy.allocators) names.push_back(allocator_kind(kinds, a).name);
  return or_list(names);
}

}  // namespace

const SchedulerDescriptor& scheduler_kind(const ServingKinds& kinds, SchedulerKind kind) {
  if (const SchedulerDescriptor* d = find_scheduler_kind(kinds.schedulers, kind)) return *d;
  throw std::invalid_argument(fmt::format("scheduler.kind '{}' has no descriptor among the kinds given", to_string(kind)));
}

const AllocatorDescriptor& allocator_kind(const ServingKinds& kinds, alloc::AllocatorKind kind) {
  for (const AllocatorDescriptor& d : kinds.allocators)
    if (d.kind == kind) return d;
  throw std::invalid_argument(
      fmt::format("allocator.kind '{}' has no descriptor among the kinds given", alloc::to_string(kind)));
}

void apply_kind_defaults(ExperimentConfig& c, const ServingKinds& kinds) {
  const ConfigOrigin& o = c.origin;
  const SchedulerDescriptor& s = scheduler_kind(kinds, c.scheduler.kind);
  const alloc::AllocatorKind own = s.allocators.front();
  if (!o.has("allocator.kind")) c.allocator.kind = own;
  if (s.default_block_size > 0 && !o.has("allocator.block_size") && c.allocator.kind == own)
    c.allocator.block_size = s.default_block_size;
  // Over a workload without token identities (a synthetic one) no prompt could hit: off.
  if (s.prefix_cache_by_default && !o.has("allocator.prefix_cache"))
    c.allocator.prefix_cache = allocator_kind(kinds, c.allocator.kind).traits().prefix_caching == alloc::PrefixCaching::kOptional &&
                               c.workload.kind != traces::WorkloadKind::kSynthetic;
}

void check_scheduler_keys(const ExperimentConfig& c, const ServingKinds& kinds) {
  const ConfigOrigin& o = c.origin;
  const SchedulerSettings& s = c.scheduler;
  const SchedulerDescriptor& d = scheduler_kind(kinds, s.kind);
  if (s.long_prefill_token_threshold > 0 && !d.reads_long_prefill_token_threshold)
    throw o.error("scheduler.long_prefill_token_threshold",
                  fmt::format("caps a prefill's tokens per step under {} only; scheduler.kind is {}: remove it",
                              kind_names(kinds.schedulers,
                                         [](const SchedulerDescriptor& k) { return k.reads_long_prefill_token_threshold; }),
                              d.name));
  if (d.reads_chunk_tokens && s.chunk_tokens < 1)
    throw o.error("scheduler.chunk_tokens", fmt::format("expected an integer >= 1 for {}, found {}", d.name, s.chunk_tokens));
}

void check_interface_only_pool(const ExperimentConfig& c, const ServingKinds& kinds) {
  const ConfigOrigin& o = c.origin;
  const AllocatorDescriptor& a = allocator_kind(kinds, c.allocator.kind);
  if (!a.traits().layer_groups) return;
  const SchedulerDescriptor& s = scheduler_kind(kinds, c.scheduler.kind);
  const auto over = [&](const SchedulerDescriptor& k) { return runs_over(k, a.kind); };
  if (!runs_over(s, a.kind))
    throw o.error("allocator.kind",
                  fmt::format("allocator.kind '{}' runs under scheduler.kind {} (they need only the allocator "
                              "interface); scheduler.kind '{}' drives a {} pool's own operations: pick one of "
                              "those schedulers, or set allocator.kind: {}",
                              a.name, kind_names(kinds.schedulers, over), s.name, pools_of(kinds, s),
                              allocator_kind(kinds, s.allocators.front()).name));
  if (c.scheduler.preemption == PreemptionMode::kSwap)
    throw o.error("scheduler.preemption",
                  fmt::format("allocator.kind '{}' has no CPU swap pool: preemption is by recompute; set "
                              "scheduler.preemption: recompute or auto",
                              a.name));
  if (!c.allocator.offload_config.at_default())
    throw o.error("allocator.offload",
                  fmt::format("offload tiers sit below the paged allocator's prefix cache; allocator.kind '{}' has "
                              "none: leave allocator.offload out, or use allocator.kind: paged",
                              a.name));
}

void check_own_keys(const ExperimentConfig& c, const ServingKinds& kinds) {
  const AllocatorDescriptor& given = allocator_kind(kinds, c.allocator.kind);
  for (const AllocatorDescriptor& d : kinds.allocators) {
    if (d.kind == given.kind || d.own_key_given == nullptr) continue;
    if (const std::string_view key = d.own_key_given(c.allocator, given); !key.empty())
      throw c.origin.error(std::string(key),
                           fmt::format("{} sets up allocator.kind: {}; allocator.kind is '{}': remove it, or set "
                                       "allocator.kind: {}",
                                       key, d.name, given.name, d.name));
  }
}

void drop_other_kinds_keys(YAML::Node& root, std::span<const KeyAssignment> assignments, const ServingKinds& kinds) {
  const auto last = std::ranges::find_if(assignments.rbegin(), assignments.rend(),
                                         [](const KeyAssignment& a) { return covers(a.key, "allocator.kind"); });
  if (last == assignments.rend() || last->key != "allocator.kind" || !last->value.IsScalar()) return;
  const AllocatorDescriptor* chosen = nullptr;
  for (const AllocatorDescriptor& d : kinds.allocators)
    if (d.name == last->value.Scalar()) chosen = &d;
  if (chosen == nullptr) return;
  for (const AllocatorDescriptor& d : kinds.allocators) {
    if (&d == chosen) continue;
    for (const std::string_view key : d.own_keys) {
      const std::string path = fmt::format("allocator.{}", key);
      const bool given = std::ranges::any_of(
          assignments, [&](const KeyAssignment& a) { return covers(path, a.key) || covers(a.key, path); });
      if (std::ranges::find(chosen->own_keys, key) == chosen->own_keys.end() && !given)
        remove_path(root, path, last->key);
    }
  }
}

std::string pool_refusal(const ServingKinds& kinds, const SchedulerDescriptor& policy, const AllocatorDescriptor& pool) {
  if (policy.pool_refusal != nullptr) return policy.pool_refusal(pool.name, pool.owner_note);
  return fmt::format("scheduler.kind '{}' needs the {} allocator, found '{}'{}", policy.name,
                     pools_of(kinds, policy), pool.name,
                     pool.owner_note.empty() ? std::string()
                                             : fmt::format("; {}set allocator.kind: {}", pool.owner_note,
                                                           allocator_kind(kinds, policy.allocators.front()).name));
}

void check_pool_pairing(const ExperimentConfig& c, const ServingKinds& kinds, PoolCheck at) {
  const SchedulerDescriptor& s = scheduler_kind(kinds, c.scheduler.kind);
  const AllocatorDescriptor& a = allocator_kind(kinds, c.allocator.kind);
  if (s.pool_check == at && !runs_over(s, a.kind)) throw c.origin.error("allocator.kind", pool_refusal(kinds, s, a));
  const PoolCheck swap_at =
      s.pool_check == PoolCheck::kAfterSwapSpace ? PoolCheck::kAfterSwapSpace : PoolCheck::kWithPoolKeys;
  if (swap_at == at && !s.swap_refusal.empty() && c.scheduler.preemption == PreemptionMode::kSwap)
    throw c.origin.error("scheduler.preemption", std::string(s.swap_refusal));
}

void check_schedule_policy(const ExperimentConfig& c, const ServingKinds& kinds) {
  const SchedulerDescriptor& s = scheduler_kind(kinds, c.scheduler.kind);
  if (c.origin.has("scheduler.schedule_policy") && !s.reads_schedule_policy)
    throw c.origin.error(
        "scheduler.schedule_policy",
        fmt::format("schedule_policy orders the waiting queue of scheduler.kind: {}; scheduler.kind is '{}'",
                    kind_names(kinds.schedulers, [](const SchedulerDescriptor& k) { return k.reads_schedule_policy; }),
                    s.name));
}

void check_fixed_prefix_cache(const ExperimentConfig& c, const ServingKinds& kinds) {
  const ConfigOrigin& o = c.origin;
  const AllocatorDescriptor& a = allocator_kind(kinds, c.allocator.kind);
  if (a.traits().prefix_caching != alloc::PrefixCaching::kAlways) return;
  // prefix_cache: true is redundant there but true (a replica override of a prefix-caching
  // cluster keeps the key); false cannot hold.
  if (o.has("allocator.prefix_cache") && !c.allocator.prefix_cache)
    throw o.error("allocator.prefix_cache",
                  fmt::format("the {} allocator always caches prompt prefixes ({}), so prefix_cache: false cannot "
                              "turn it off; leave allocator.prefix_cache out, or use allocator.kind: paged",
                              a.name, a.cache_note));
  if (o.has("allocator.eviction"))
    throw o.error("allocator.eviction", fmt::format("the {} allocator {}; leave allocator.eviction out, or use "
                                                    "allocator.kind: paged",
                                                    a.name, a.eviction_note));
}

void check_lora_pairing(const ExperimentConfig& c, const ServingKinds& kinds) {
  const ConfigOrigin& o = c.origin;
  const AllocatorDescriptor& a = allocator_kind(kinds, c.allocator.kind);
  const SchedulerDescriptor& s = scheduler_kind(kinds, c.scheduler.kind);
  if (!a.traits().lora)
    throw o.error("allocator.kind",
                  fmt::format("lora keeps adapter weights in a paged KV pool (vLLM's slots or S-LoRA's pages); "
                              "allocator.kind is '{}': set allocator.kind: {}",
                              a.name, kind_names(kinds.allocators, [](const AllocatorDescriptor& k) { return k.traits().lora; })));
  if (!s.lora)
    throw o.error("scheduler.kind", fmt::format("lora's admission rules (adapter residency, max_loras) are modelled "
                                                "for {}; scheduler.kind is '{}'",
                                                kind_names(kinds.schedulers, [](const SchedulerDescriptor& k) { return k.lora; }),
                                                s.name));
}

void check_speculative_pairing(const ExperimentConfig& c, const ServingKinds& kinds) {
  const ConfigOrigin& o = c.origin;
  const SchedulerDescriptor& s = scheduler_kind(kinds, c.scheduler.kind);
  if (!s.speculation)
    throw o.error("speculative.method",
                  fmt::format("speculative decoding follows vLLM v1's scheduler (lookahead slots, 1 + k tokens of the "
                              "budget per decode), but scheduler.kind is '{}': set scheduler.kind: {}",
                              s.name,
                              kind_names(kinds.schedulers, [](const SchedulerDescriptor& k) { return k.speculation; })));
  const AllocatorDescriptor& a = allocator_kind(kinds, c.allocator.kind);
  if (!a.traits().speculation)
    throw o.error("allocator.kind",
                  fmt::format("speculative decoding holds proposed tokens in a paged pool's block tables; expected {}, "
                              "found '{}'",
                              kind_names(kinds.allocators, [](const AllocatorDescriptor& k) { return k.traits().speculation; }),
                              a.name));
}

}  // namespace pagesim::sim

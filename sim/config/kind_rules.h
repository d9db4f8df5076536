// kind_rules: the rules of scheduler and allocator kinds over an experiment, written once and
// generic over the kinds' descriptors (sim/scheduler/scheduler_kind.h,
// sim/config/allocator_kinds.h): the settings a scheduler implies, the config's checks of
// which scheduler goes with which allocator and of what each supports, and the words of a
// refusal, which name the kind and the key. ServingKinds is the table they read: the built-in
// kServingKinds, or one a caller passes (a test's example kind). Stateless; the tables are
// constants.
#pragma once

#include <cassert>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sim/config/allocator_kinds.h"
#include "sim/config/config_tree.h"
#include "sim/core/close_names.h"
#include "sim/config/experiment_config.h"
#include "sim/scheduler/scheduler_kind.h"
#include "sim/scheduler/scheduler_kinds.h"

namespace pagesim::sim {

// The scheduler and allocator kinds a run may name. Views: the tables must outlive it.
struct ServingKinds {
  std::span<const SchedulerDescriptor> schedulers;
  std::span<const AllocatorDescriptor> allocators;
};
inline constexpr ServingKinds kServingKinds{kSchedulerKinds, kAllocatorKinds};

// The descriptor of `kind`. Throws std::invalid_argument when `kinds` has none.
const SchedulerDescriptor& scheduler_kind(const ServingKinds& kinds, SchedulerKind kind);
const AllocatorDescriptor& allocator_kind(const ServingKinds& kinds, alloc::AllocatorKind kind);

// The names of the kinds of `table` that `pick` selects, in table order, as or_list words them.
template <class Descriptor, class Pick>
std::string kind_names(std::span<const Descriptor> table, Pick pick) {
  std::vector<std::string_view> names;
  for (const Descriptor& d : table)
    if (pick(d)) names.push_back(d.name);
  return or_list(names);
}

// The first kind of `table` that `pick` selects. REQUIRES: there is one.
template <class Descriptor, class Pick>
const Descriptor& first_of(std::span<const Descriptor> table, Pick pick) {
  for (const Descriptor& d : table)
    if (pick(d)) return d;
  assert(false && "no kind of the table is picked");
  return table.front();
}

// The settings scheduler.kind implies for keys the file leaves out (parse_experiment applies
// them once the sections are read): allocator.kind (the scheduler's default allocator),
// allocator.block_size over that allocator, allocator.prefix_cache where the scheduler turns
// it on by default. REQUIRES: c.origin records the keys the file gave.
void apply_kind_defaults(ExperimentConfig& c, const ServingKinds& kinds);

// The checks below throw ConfigError on the key at fault; parse_experiment calls each at its
// point, in an order that decides which fault of a file with several is named.

// scheduler.long_prefill_token_threshold and scheduler.chunk_tokens against the kinds that
// read them.
void check_scheduler_keys(const ExperimentConfig& c, const ServingKinds& kinds);
// A layer-group pool (alloc::AllocatorTraits::layer_groups) refuses a policy that drives more
// than the KvAllocator interface, scheduler.preemption: swap and offload tiers.
void check_interface_only_pool(const ExperimentConfig& c, const ServingKinds& kinds);
// A key of one allocator kind given under another (AllocatorDescriptor::own_key_given).
void check_own_keys(const ExperimentConfig& c, const ServingKinds& kinds);
// What --set, a sweep point or a replicas.overrides entry that sets allocator.kind leaves of
// the experiment's allocator section in `root`, `assignments` being what they laid over it,
// in order: when the last one that reaches allocator.kind sets it to a kind's name, the other
// kinds' own keys (AllocatorDescriptor::own_keys) that no assignment gives are removed. A
// whole allocator section laid over the file, or a kind not in `kinds` (parsing then names
// it), removes nothing.
void drop_other_kinds_keys(YAML::Node& root, std::span<const KeyAssignment> assignments, const ServingKinds& kinds);
// The scheduler's refusals of the pool and of scheduler.preemption: swap made at `at`
// (SchedulerDescriptor::pool_check; a swap refusal is made at kWithPoolKeys unless the
// scheduler's pool check is kAfterSwapSpace). REQUIRES: at != PoolCheck::kAtBuild.
void check_pool_pairing(const ExperimentConfig& c, const ServingKinds& kinds, PoolCheck at);
// scheduler.schedule_policy under a kind that does not read it.
void check_schedule_policy(const ExperimentConfig& c, const ServingKinds& kinds);
// allocator.prefix_cache: false and allocator.eviction over a pool that is its cache.
void check_fixed_prefix_cache(const ExperimentConfig& c, const ServingKinds& kinds);
// The lora section's allocator and scheduler. REQUIRES: c.lora.enabled.
void check_lora_pairing(const ExperimentConfig& c, const ServingKinds& kinds);
// The speculative section's scheduler and allocator. REQUIRES: speculation enabled.
void check_speculative_pairing(const ExperimentConfig& c, const ServingKinds& kinds);

// The message refusing allocator.kind `pool` under scheduler.kind `policy` (the key is
// allocator.kind): the scheduler's own words (pool_refusal), else "scheduler.kind 'K' needs
// the A allocator, found 'F'", with the pool's owner_note when it has one.
std::string pool_refusal(const ServingKinds& kinds, const SchedulerDescriptor& policy, const AllocatorDescriptor& pool);

}  // namespace pagesim::sim

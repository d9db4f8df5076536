// AllocatorDescriptor: one allocator.kind and what it offers the rest of a run, as data: what
// the pool itself offers (alloc::AllocatorTraits: layer groups, swap, offload tiers, beams,
// LoRA, speculation, its prefix cache, read from allocator/make_allocator.h), and what only a
// run's configuration knows: where its row length comes from, its notes to the user, its own
// config section and its factory. kAllocatorKinds lists the built-in ones; the generic code
// (sim/config/kind_rules.h; the experiment's pairing of pool and policy) reads descriptors
// only. Constants: safe to share.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "allocator/kv_allocator.h"
#include "allocator/make_allocator.h"
#include "sim/scheduler/pool_ref.h"

namespace pagesim::sim {

struct AllocatorConfig;

// A pool as built: the allocator, owned, and the view policies are built over.
struct BuiltPool {
  std::unique_ptr<alloc::KvAllocator> allocator;
  PoolRef pool;
};

// Where the pool's row length, AllocatorSpec::max_seq_len, comes from when the file leaves
// allocator.max_seq_len out (config.resolved.yaml writes the value used).
enum class RowLength {
  kAsConfigured,  // the config's (its default 2048)
  kModelContext,  // the model's context length; buddy chunks (max_chunk_blocks) grow to hold one row
  kMaxModelLen,   // max_model_len (the model's context under max_model_len: off), given or not
};

struct AllocatorDescriptor {
  alloc::AllocatorKind kind;
  std::string_view name;  // allocator.kind's value, as in alloc::kAllocatorKindNames
  RowLength row_length = RowLength::kAsConfigured;
  // traits().prefix_caching kAlways: why prefix_cache: false cannot hold, and its fixed eviction order.
  std::string_view cache_note = {};
  std::string_view eviction_note = {};
  // A pool built for one policy: says so to another policy that refuses it, to be followed by
  // the ways out (SchedulerDescriptor::pool_refusal's `hint`). Empty: none.
  std::string_view owner_note = {};
  // Non-empty: why it cannot hold a latent-attention (MLA) cache.
  std::string_view no_latent_attention = {};
  // The keys of the allocator section only this kind reads (contiguous: reservation,
  // placement, max_chunk_blocks, max_seq_len; vattention: its section), by name under
  // "allocator.". A replica override or sweep point that sets another kind does not inherit
  // them (drop_other_kinds_keys).
  std::span<const std::string_view> own_keys = {};
  // Under another kind `under`: the first of own_keys the config holds at a value `under`
  // would not write to config.resolved.yaml itself, as its dotted key; else empty (so a
  // resolved config runs again). check_own_keys refuses it. Null iff own_keys is empty.
  std::string_view (*own_key_given)(const AllocatorConfig& a, const AllocatorDescriptor& under) = nullptr;
  // Builds the pool `spec` describes. Throws what allocator/make_allocator.h throws.
  BuiltPool (*build)(const alloc::AllocatorSpec& spec) = nullptr;
  // A kind outside alloc::AllocatorKind (one registered by a table of its own, as a test's
  // example kind is) declares what its pool offers; a built-in kind leaves this empty and
  // offers what allocator/ says (alloc::traits_of).
  std::optional<alloc::AllocatorTraits> declared_traits = std::nullopt;

  // What the pool offers, as the config reads it: swap (allocator.cpu_swap_gib), tiers
  // (allocator.offload, replicas.global_cache), beam (workload.sampling beam_width > 1), lora
  // (the lora section), speculation (the speculative section), prefix_caching
  // (allocator.prefix_cache: kNone refuses true, kAlways refuses false and allocator.eviction).
  // A layer_groups pool refuses policies that drive more than the KvAllocator interface,
  // scheduler.preemption: swap and offload tiers, in its own words.
  constexpr alloc::AllocatorTraits traits() const { return declared_traits ? *declared_traits : alloc::traits_of(kind); }
  // Whether a pool of this kind caches prefixes under `prefix_cache` (allocator.prefix_cache).
  constexpr bool caches_prefixes(bool prefix_cache) const {
    const alloc::PrefixCaching p = traits().prefix_caching;
    return p == alloc::PrefixCaching::kAlways || (p == alloc::PrefixCaching::kOptional && prefix_cache);
  }
};

// The factories of the descriptors below.
BuiltPool build_paged_pool(const alloc::AllocatorSpec& spec);  // a PagedAllocator (swap, LoRA, tiers)
BuiltPool build_radix_pool(const alloc::AllocatorSpec& spec);  // a RadixAllocator
BuiltPool build_kv_pool(const alloc::AllocatorSpec& spec);     // alloc::make_allocator, KvAllocator only
inline constexpr std::array<std::string_view, 4> kContiguousKeys = {"reservation", "placement", "max_chunk_blocks",
                                                                    "max_seq_len"};
inline constexpr std::array<std::string_view, 1> kVattentionKeys = {"vattention"};
std::string_view contiguous_key_given(const AllocatorConfig& a, const AllocatorDescriptor& under);
std::string_view vattention_key_given(const AllocatorConfig& a, const AllocatorDescriptor& under);

inline constexpr std::array kAllocatorKinds = {
    AllocatorDescriptor{.kind = alloc::AllocatorKind::kPaged,
                        .name = "paged",
                        .build = &build_paged_pool},
    AllocatorDescriptor{.kind = alloc::AllocatorKind::kContiguous,
                        .name = "contiguous",
                        .row_length = RowLength::kModelContext,
                        .own_keys = kContiguousKeys,
                        .own_key_given = &contiguous_key_given,
                        .build = &build_kv_pool},
    // The radix pool reads neither max_seq_len nor max_chunk_blocks; config.resolved.yaml
    // writes them as for contiguous (kModelContext), as it always has.
    AllocatorDescriptor{.kind = alloc::AllocatorKind::kRadix,
                        .name = "radix",
                        .row_length = RowLength::kModelContext,
                        .cache_note = "its radix tree is the cache",
                        .eviction_note = "evicts unreferenced leaves least recently used first (SGLang's default)",
                        .owner_note = "allocator.kind 'radix' is SGLang's radix-tree cache, which scheduler.kind: "
                                      "sglang drives: use scheduler.kind: sglang, or ",
                        .build = &build_radix_pool},
    AllocatorDescriptor{.kind = alloc::AllocatorKind::kUniform,
                        .name = "uniform",
                        .build = &build_kv_pool},
    AllocatorDescriptor{.kind = alloc::AllocatorKind::kHybrid,
                        .name = "hybrid",
                        .build = &build_kv_pool},
    AllocatorDescriptor{.kind = alloc::AllocatorKind::kJenga,
                        .name = "jenga",
                        .build = &build_kv_pool},
    AllocatorDescriptor{.kind = alloc::AllocatorKind::kVattention,
                        .name = "vattention",
                        .row_length = RowLength::kMaxModelLen,
                        .no_latent_attention = "vAttention lays a layer's KV out as a K and a V buffer per KV head, "
                                               "while MLA keeps one latent record per layer shared by every head",
                        .own_keys = kVattentionKeys,
                        .own_key_given = &vattention_key_given,
                        .build = &build_kv_pool},
};

static_assert([] {
  if (kAllocatorKinds.size() != alloc::kAllocatorKindNames.size()) return false;
  for (std::size_t i = 0; i < kAllocatorKinds.size(); ++i) {
    const AllocatorDescriptor& d = kAllocatorKinds[i];
    if (d.kind != alloc::kAllocatorKindNames[i].first || d.name != alloc::kAllocatorKindNames[i].second ||
        d.build == nullptr || d.declared_traits || d.own_keys.empty() != (d.own_key_given == nullptr) ||
        (d.traits().prefix_caching == alloc::PrefixCaching::kAlways) == d.cache_note.empty())
      return false;
  }
  return true;
}(), "kAllocatorKinds: one complete descriptor per allocator kind, in the order of kAllocatorKindNames");

}  // namespace pagesim::sim

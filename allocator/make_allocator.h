// make_allocator: builds any KV allocator from one plain, typed spec. Every policy is a
// value already (an enum or a ReservationPolicy), so building only checks sizes: it throws
// AllocatorError for a pool that holds no block or a block size the allocator refuses.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>

#include "allocator/contiguous/contiguous_policy.h"
#include "allocator/contiguous/placement.h"
#include "allocator/kv_allocator.h"
#include "allocator/layer_group.h"
#include "allocator/pool/eviction_policy.h"
#include "allocator/tier/tier_settings.h"
#include "allocator/vattention/vattention_allocator.h"

namespace pagesim::alloc {

enum class AllocatorKind {
  kPaged,       // fixed-size blocks, block tables, copy-on-write, optional prefix cache
  kContiguous,  // one reserved range per request (the vLLM paper's Orca baselines)
  kRadix,       // SGLang's radix-tree prefix cache over pages of block_size tokens
  // Heterogeneous models (allocator/layer_group.h; allocator/hetero/): sized by pool_bytes
  // and layer_groups, not capacity_slots.
  kUniform,     // paged, every layer treated as full attention: the waste baseline
  kHybrid,      // vLLM v1's hybrid KV cache manager: a block table per KV cache group
  kJenga,       // Jenga's two-level allocator: LCM-sized large pages carved per layer type
  kVattention,  // vAttention: virtually contiguous KV per request, pages mapped on demand
};

// The names configs write (a std::array of pairs, the form of every name table).
inline constexpr std::array<std::pair<AllocatorKind, std::string_view>, 7> kAllocatorKindNames = {{
    {AllocatorKind::kPaged, "paged"},
    {AllocatorKind::kContiguous, "contiguous"},
    {AllocatorKind::kRadix, "radix"},
    {AllocatorKind::kUniform, "uniform"},
    {AllocatorKind::kHybrid, "hybrid"},
    {AllocatorKind::kJenga, "jenga"},
    {AllocatorKind::kVattention, "vattention"},
}};

// "paged", "contiguous", "radix", "uniform", "hybrid", "jenga", "vattention";
// "?" for a value outside the enum.
constexpr std::string_view to_string(AllocatorKind kind) {
  for (const auto& [k, name] : kAllocatorKindNames)
    if (k == kind) return name;
  return "?";
}

enum class PrefixCaching {
  kNone,      // no prefix cache (AllocatorSpec::prefix_cache is not read)
  kOptional,  // AllocatorSpec::prefix_cache turns it on
  kAlways,    // the pool is the cache: prefix_cache and eviction are not read
};

// What a kind of pool offers besides the KvAllocator interface, as data: the facts a run's
// configuration checks read (sim/config/allocator_kinds.h) before building one.
struct AllocatorTraits {
  // Sized by pool_bytes and the model's layer groups (heterogeneous models), not
  // capacity_slots, and driven through the KvAllocator interface only.
  bool layer_groups = false;
  bool swap = false;         // a CPU swap pool (AllocatorSpec::cpu_blocks) for preemption by swap
  bool tiers = false;        // offload tiers and remote prefix fetches into its prefix cache
  bool beam = false;         // fork shares every block, so it never fails: beam search can reshape
  bool lora = false;         // LoRA adapter weights in the pool (adapter_region_blocks, adapter pages)
  bool speculation = false;  // holds proposed slots (KvAllocator::holds_proposed_slots)
  PrefixCaching prefix_caching = PrefixCaching::kNone;
  friend constexpr bool operator==(const AllocatorTraits&, const AllocatorTraits&) = default;
};

constexpr AllocatorTraits traits_of(AllocatorKind kind) {
  switch (kind) {
    case AllocatorKind::kPaged:
      return {.swap = true,
              .tiers = true,
              .beam = true,
              .lora = true,
              .speculation = true,
              .prefix_caching = PrefixCaching::kOptional};
    case AllocatorKind::kContiguous: return {};
    case AllocatorKind::kRadix: return {.prefix_caching = PrefixCaching::kAlways};
    case AllocatorKind::kUniform:
    case AllocatorKind::kHybrid:
    case AllocatorKind::kJenga: return {.layer_groups = true, .prefix_caching = PrefixCaching::kOptional};
    case AllocatorKind::kVattention: return {.layer_groups = true};
  }
  return {};
}

// The pools of heterogeneous models, sized by pool_bytes and layer_groups: uniform, hybrid,
// jenga, vattention.
constexpr bool is_layer_group_kind(AllocatorKind kind) { return traits_of(kind).layer_groups; }

// What the pool is, in a line (`pagesim presets`).
constexpr std::string_view describe(AllocatorKind kind) {
  switch (kind) {
    case AllocatorKind::kPaged:
      return "fixed-size blocks, block tables, copy-on-write; optional prefix cache and offload tiers (vLLM)";
    case AllocatorKind::kContiguous:
      return "one reserved range per request, by reservation and placement policy (the vLLM paper's Orca)";
    case AllocatorKind::kRadix: return "radix-tree prefix cache over pages of block_size tokens (SGLang)";
    case AllocatorKind::kUniform:
      return "layer-group models: paged, every layer charged as full attention (the waste baseline)";
    case AllocatorKind::kHybrid:
      return "layer-group models: a block table per KV cache group over one page pool (vLLM v1 hybrid manager)";
    case AllocatorKind::kJenga: return "layer-group models: LCM-sized large pages carved per layer type (Jenga)";
    case AllocatorKind::kVattention:
      return "layer-group models: virtually contiguous KV per request, pages mapped on demand (vAttention)";
  }
  return "?";
}

struct AllocatorSpec {
  AllocatorKind kind = AllocatorKind::kPaged;
  // paged: blocks reserved for LoRA adapter weights apart from the KV (vLLM's max_loras
  // slots, PagedAllocatorSettings::adapter_region_blocks); 0: none. Not a config key.
  std::int64_t adapter_region_blocks = 0;
  std::int64_t capacity_slots = 0;    // pool size in token slots; pools of whole blocks hold it
                                      // rounded down to them (pool_slots())
  std::int64_t block_size = 16;       // tokens per block (paged, and the contiguous buddy unit;
                                      // radix: tokens per page)
  bool prefix_cache = false;          // paged: reuse prompt blocks across requests (the config
                                      // defaults it to true for scheduler.kind: vllm-v1)
  EvictionKind eviction = EvictionKind::kLru;  // paged prefix cache: which cached block goes
  bool single_free_queue = false;     // paged, uniform, hybrid, jenga with pages of one size:
                                      // vLLM v1's one free-block queue (set by the experiment
                                      // for scheduler.kind: vllm-v1, not a config key)
  std::int64_t cpu_blocks = 0;        // paged: CPU swap pool in blocks (shared with a CPU tier)
  OffloadSettings offload;            // paged + prefix cache: tiers below the GPU; empty: none
  ContiguousPolicy contiguous;        // contiguous: reservation, placement, largest buddy chunk
  std::int64_t max_seq_len = 2048;    // contiguous: reservation cap, tokens; vattention: row length
  // uniform, hybrid, jenga (allocator/hetero/), vattention: the model's layer groups and the KV pool in
  // bytes (per GPU). capacity_slots is ignored: these pools are sized in bytes because a
  // token's KV differs between layer groups; block_size, prefix_cache and eviction apply.
  LayerGroups layer_groups;
  std::int64_t pool_bytes = 0;
  // vattention: its own settings (page size, request slots, deferred reclamation); its layer
  // groups, pool and row length are layer_groups, pool_bytes and max_seq_len above.
  VattentionSettings vattention;

  // Whether the pool is cut into whole blocks of block_size slots: paged, radix, and contiguous
  // with buddy placement. Contiguous first_fit / best_fit place single slots; the layer-group
  // kinds are sized by pool_bytes.
  bool whole_blocks() const {
    return kind == AllocatorKind::kPaged || kind == AllocatorKind::kRadix ||
           (kind == AllocatorKind::kContiguous && contiguous.placement == PlacementKind::kBuddy);
  }
  // The token slots a pool asked for `slots` holds: `slots` rounded down to whole blocks when
  // whole_blocks(), else `slots` (also for a block_size < 1, which building refuses).
  // make_allocator() builds the pool of pool_slots(capacity_slots).
  std::int64_t pool_slots(std::int64_t slots) const {
    return whole_blocks() && block_size > 0 ? slots / block_size * block_size : slots;
  }

  // Whether the pool reuses prompt prefixes across requests: a paged or grouped pool with its
  // prefix cache on, or the radix pool (its tree is the cache).
  bool caches_prefixes() const {
    const PrefixCaching p = traits_of(kind).prefix_caching;
    return p == PrefixCaching::kAlways || (p == PrefixCaching::kOptional && prefix_cache);
  }
};

class PagedAllocator;
class RadixAllocator;
class GroupedKvAllocator;

std::unique_ptr<KvAllocator> make_allocator(const AllocatorSpec& spec);
// The paged pool `spec` describes, for callers that drive its own operations (swapping,
// free-block counts). REQUIRES: spec.kind == kPaged (else AllocatorError).
std::unique_ptr<PagedAllocator> make_paged_allocator(const AllocatorSpec& spec);
// The radix-tree pool `spec` describes (pages of spec.block_size tokens), for the sglang
// scheduler. REQUIRES: spec.kind == kRadix (else AllocatorError).
std::unique_ptr<RadixAllocator> make_radix_allocator(const AllocatorSpec& spec);
// The heterogeneous pool `spec` describes (uniform, hybrid or jenga layout of
// spec.layer_groups over spec.pool_bytes; allocator/hetero/), for callers that read its
// layout or per-table block tables. REQUIRES: one of those kinds (else AllocatorError); the
// layout builders throw AllocatorError for groups or sizes they refuse.
std::unique_ptr<GroupedKvAllocator> make_grouped_allocator(const AllocatorSpec& spec);

}  // namespace pagesim::alloc

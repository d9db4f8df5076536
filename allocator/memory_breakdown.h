// MemoryBreakdown: where every slot of a KV pool is at one moment.
//
// Every slot is in exactly one class, so the five classes always sum to capacity:
//   token_states  holds the KV of a token already computed
//   reserved      allocated for a token the sequence will generate under its reservation
//                 (min(estimate, final) - current)
//   over_reserved allocated beyond the sequence's true final length, never used
//                 (estimate - final, when the estimate is larger)
//   rounding      allocated only because allocation is rounded up (unfilled part of the last
//                 paged block; block and power-of-two rounding of a buddy chunk)
//   free          not allocated (holes between contiguous ranges included)
// Three more classes exist only for models whose layers differ (allocator/layer_group.h); every
// allocator of a single-group model leaves them 0:
//   out_of_window   holds the KV of a token that no future query attends (a sliding-window or
//                   chunked-local layer's token that fell out of its window or chunk) but is
//                   still allocated
//   recurrent_state the fixed-size state of a recurrent (Mamba / linear-attention) layer group,
//                   per sequence
//   unused_layers   allocated for a (token, layer) pair that the layer never stores: a uniform
//                   allocator's per-token room in a cross-attention or recurrent layer for a
//                   decoder token, or in a self-attention layer for an encoder token
// One more class exists only where LoRA adapters share the GPU memory the pool is carved
// from (sim/lora/adapter_cache.h); every other run leaves it 0:
//   adapter_weights slots holding LoRA adapter weights instead of KV: vLLM's max_loras GPU
//                   slots reserved apart from the KV, or S-LoRA's adapter pages in the pool
// Four more exist only with speculative decoding on (allocator/proposed_slots.h); every other
// run leaves them 0:
//   proposed_accepted slots of proposed (draft) tokens that verification will accept: their
//                   KV becomes token states when the step ends
//   proposed_rejected slots of proposed tokens that verification will reject: freed when the
//                   step ends, never token states, never cached
//   lookahead       slots reserved for the drafter's next proposals (vLLM v1's
//                   num_lookahead_tokens, EAGLE); freed when the step ends
//   draft_kv        the draft model's KV carved out of the pool's memory (its layers' blocks,
//                   one per target block: speculative.draft_kv shared); not the allocator's
//                   (0 in KvAllocator::breakdown), added by the engine to what it samples
// Units: token slots (one token's K and V, all layers) for single-group pools; an allocator of
// a heterogeneous model states its unit (KvAllocator::name and its header), and every class,
// capacity included, is in that unit, so shares of capacity stay exact.
// `cached_free` is informational and already inside `free`: unreferenced prefix-cache blocks
// that still hold reusable KV and are evicted on demand. Shared blocks count once.
// kMemoryBreakdownFields lists the members every run writes, in output order (the metrics' CSV
// columns are generated from it); kLayerClassFields lists the three classes above, written only
// by runs of a heterogeneous model; kAdapterClassFields the adapter class, written only by runs
// with LoRA adapters; kSpeculativeFields the four above, written only by runs with speculative
// decoding. Together they list every member once; sums and differences
// are generated from both.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>

namespace pagesim::alloc {

struct MemoryBreakdown {
  std::int64_t token_states = 0;
  std::int64_t reserved = 0;
  std::int64_t over_reserved = 0;
  std::int64_t rounding = 0;
  std::int64_t free = 0;
  std::int64_t cached_free = 0;  // subset of free; not part of total()
  std::int64_t out_of_window = 0;
  std::int64_t recurrent_state = 0;
  std::int64_t unused_layers = 0;
  std::int64_t adapter_weights = 0;
  std::int64_t proposed_accepted = 0;
  std::int64_t proposed_rejected = 0;
  std::int64_t lookahead = 0;
  std::int64_t draft_kv = 0;

  std::int64_t allocated() const {
    return token_states + reserved + over_reserved + rounding + out_of_window + recurrent_state + unused_layers +
           adapter_weights + proposed_accepted + proposed_rejected + lookahead + draft_kv;
  }
  std::int64_t total() const { return allocated() + free; }

  MemoryBreakdown& operator+=(const MemoryBreakdown& o);
  MemoryBreakdown& operator-=(const MemoryBreakdown& o);
  friend bool operator==(const MemoryBreakdown&, const MemoryBreakdown&) = default;
};

// One member of MemoryBreakdown: its output name (CSV column, JSON key) and the member.
struct MemoryBreakdownField {
  std::string_view name;
  std::int64_t MemoryBreakdown::*member;
};

// Every member of MemoryBreakdown, once, in output order.
inline constexpr std::array<MemoryBreakdownField, 6> kMemoryBreakdownFields{{
    {"token_states", &MemoryBreakdown::token_states},
    {"reserved", &MemoryBreakdown::reserved},
    {"over_reserved", &MemoryBreakdown::over_reserved},
    {"rounding", &MemoryBreakdown::rounding},
    {"free", &MemoryBreakdown::free},
    {"cached_free", &MemoryBreakdown::cached_free},
}};
// The classes only heterogeneous models have (see the header comment), in output order.
inline constexpr std::array<MemoryBreakdownField, 3> kLayerClassFields{{
    {"out_of_window", &MemoryBreakdown::out_of_window},
    {"recurrent_state", &MemoryBreakdown::recurrent_state},
    {"unused_layers", &MemoryBreakdown::unused_layers},
}};
// The class only runs with LoRA adapters have (see the header comment).
inline constexpr std::array<MemoryBreakdownField, 1> kAdapterClassFields{{
    {"adapter_weights", &MemoryBreakdown::adapter_weights},
}};
// The classes only speculative decoding has (see the header comment), in output order.
inline constexpr std::array<MemoryBreakdownField, 4> kSpeculativeFields{{
    {"proposed_accepted", &MemoryBreakdown::proposed_accepted},
    {"proposed_rejected", &MemoryBreakdown::proposed_rejected},
    {"lookahead", &MemoryBreakdown::lookahead},
    {"draft_kv", &MemoryBreakdown::draft_kv},
}};
static_assert(sizeof(MemoryBreakdown) == (kMemoryBreakdownFields.size() + kLayerClassFields.size() +
                                          kAdapterClassFields.size() + kSpeculativeFields.size()) *
                                             sizeof(std::int64_t),
              "a MemoryBreakdown member is missing from kMemoryBreakdownFields, kLayerClassFields, "
              "kAdapterClassFields or kSpeculativeFields");

inline MemoryBreakdown& MemoryBreakdown::operator+=(const MemoryBreakdown& o) {
  for (const auto& f : kMemoryBreakdownFields) this->*f.member += o.*f.member;
  for (const auto& f : kLayerClassFields) this->*f.member += o.*f.member;
  for (const auto& f : kAdapterClassFields) this->*f.member += o.*f.member;
  for (const auto& f : kSpeculativeFields) this->*f.member += o.*f.member;
  return *this;
}

inline MemoryBreakdown& MemoryBreakdown::operator-=(const MemoryBreakdown& o) {
  for (const auto& f : kMemoryBreakdownFields) this->*f.member -= o.*f.member;
  for (const auto& f : kLayerClassFields) this->*f.member -= o.*f.member;
  for (const auto& f : kAdapterClassFields) this->*f.member -= o.*f.member;
  for (const auto& f : kSpeculativeFields) this->*f.member -= o.*f.member;
  return *this;
}

// Splits one sequence's allocation into classes (free stays 0).
//   current:   tokens whose KV the sequence holds now
//   final:     true final length (prompt + true output), final >= current
//   estimate:  slots the allocator meant to cover, before rounding (contiguous: the
//              reservation min(prompt + estimated output, max_len); paged: == current)
//   allocated: slots actually held, allocated >= max(current, estimate)
// The classes of the result sum to `allocated`.
inline MemoryBreakdown classify_allocation(std::int64_t current, std::int64_t final,
                                           std::int64_t estimate, std::int64_t allocated) {
  MemoryBreakdown b;
  b.token_states = current;
  b.reserved = std::max<std::int64_t>(0, std::min(estimate, final) - current);
  b.over_reserved = std::max<std::int64_t>(0, estimate - final);
  b.rounding = allocated - std::max(estimate, current);
  return b;
}

}  // namespace pagesim::alloc

// LayerGroup: the layers of a model that store KV alike, as an allocator sees them.
//
// A model whose layers all do full attention is one group, and every allocator before the
// heterogeneous ones assumes it. Current models mix kinds (Gemma 2/3, Ministral, gpt-oss and
// Llama 4: sliding-window or chunked-local layers beside full attention; Llama 3.2 Vision:
// cross-attention layers; Jamba and Qwen3-Next: recurrent layers), so one token costs
// different KV bytes in different layers, and some layers stop needing a token's KV. What
// each kind keeps for a sequence of n tokens whose next query is at position n:
//   kFull            every token: keys [0, n)
//   kSlidingWindow   the last W = window_tokens keys: [max(0, n + 1 - W), n); a query at
//                    position p attends keys p - W + 1 .. p (Mistral / Gemma convention)
//   kChunkedLocal    the keys of the query's own chunk of C = window_tokens:
//                    [floor(n / C) * C, n) (Llama 4's attention chunks)
//   kCrossAttention  encoder_tokens keys fixed at admission (the image or audio input), none
//                    per decoder token
//   kRecurrent       no keys: state_bytes of state per sequence, whatever its length
// All sizes are per GPU (after tensor parallelism) for the group's layers together; the model
// side (sim/cost/model_spec.h) derives them from heads, head dim and the KV dtype. A plain value.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace pagesim::alloc {

enum class LayerGroupKind { kFull, kSlidingWindow, kChunkedLocal, kCrossAttention, kRecurrent };

inline constexpr std::array<std::pair<LayerGroupKind, std::string_view>, 5> kLayerGroupKindNames = {{
    {LayerGroupKind::kFull, "full"},
    {LayerGroupKind::kSlidingWindow, "sliding_window"},
    {LayerGroupKind::kChunkedLocal, "chunked_local"},
    {LayerGroupKind::kCrossAttention, "cross_attention"},
    {LayerGroupKind::kRecurrent, "recurrent"},
}};

constexpr std::string_view to_string(LayerGroupKind kind) {
  for (const auto& [k, name] : kLayerGroupKindNames)
    if (k == kind) return name;
  return "?";
}

struct LayerGroup {
  LayerGroupKind kind = LayerGroupKind::kFull;
  std::int32_t layers = 0;              // layers in the group, >= 1
  std::int64_t kv_bytes_per_token = 0;  // K + V of one token over the group's layers (bytes);
                                        // 0 for kRecurrent
  std::int64_t window_tokens = 0;       // W (kSlidingWindow) or C (kChunkedLocal); else 0
  std::int64_t encoder_tokens = 0;      // kCrossAttention: keys per request; else 0
  std::int64_t state_bytes = 0;         // kRecurrent: state per sequence (bytes); else 0

  friend bool operator==(const LayerGroup&, const LayerGroup&) = default;
};

// A model's groups, in layer order of first appearance; one kFull group for a uniform model.
using LayerGroups = std::vector<LayerGroup>;

}  // namespace pagesim::alloc

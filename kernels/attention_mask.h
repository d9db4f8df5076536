// AttentionMask: which keys a query sees beyond causality, for the sliding-window and
// chunked-local layers of heterogeneous models (allocator/layer_group.h has the same kinds
// from the memory side).
//
// A query at position p (attention_args.h: p = kv_len - query_len + i) sees keys
//   kCausal         0 .. p                                 (every kernel before masks)
//   kSlidingWindow  max(0, p - window + 1) .. p            (the last `window` keys, itself
//                                                           included: Mistral / Gemma)
//   kChunkedLocal   floor(p / window) · window .. p        (its own chunk: Llama 4)
// The first visible key never decreases with p, so a sequence's earliest query bounds the
// keys (and the blocks) the whole sequence reads: attended_blocks gives the block range a
// paged kernel must be able to read, and blocks before it may be freed (the block table
// entry is then not read). A plain value; header-only, constexpr.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>
#include <utility>

namespace pagesim::kernels {

enum class MaskKind : std::uint8_t { kCausal, kSlidingWindow, kChunkedLocal };

inline constexpr std::array<std::pair<MaskKind, std::string_view>, 3> kMaskKindNames = {{
    {MaskKind::kCausal, "causal"},
    {MaskKind::kSlidingWindow, "sliding_window"},
    {MaskKind::kChunkedLocal, "chunked_local"},
}};

struct AttentionMask {
  MaskKind kind = MaskKind::kCausal;
  std::int32_t window = 0;  // W or C tokens, >= 1 for kSlidingWindow / kChunkedLocal; else 0

  // The first key a query at position `pos` (>= 0) sees.
  constexpr std::int64_t first_visible_key(std::int64_t pos) const {
    switch (kind) {
      case MaskKind::kCausal: return 0;
      case MaskKind::kSlidingWindow: return std::max<std::int64_t>(0, pos - window + 1);
      case MaskKind::kChunkedLocal: return pos / window * window;
    }
    return 0;
  }
  constexpr bool visible(std::int64_t key, std::int64_t pos) const {
    return key <= pos && key >= first_visible_key(pos);
  }
  constexpr bool causal() const { return kind == MaskKind::kCausal; }
};

// Logical blocks [first, end) of block_size tokens that hold a key some query of a sequence
// with kv_len keys and query_len trailing queries sees; empty (first == end) with no query
// or no key. REQUIRES: 0 <= query_len <= kv_len (decode: query_len 1 with kv_len >= 0),
// block_size >= 1.
struct BlockRange {
  std::int64_t first = 0;
  std::int64_t end = 0;
};
constexpr BlockRange attended_blocks(const AttentionMask& mask, std::int64_t kv_len, std::int64_t query_len,
                                     std::int64_t block_size) {
  if (query_len <= 0 || kv_len <= 0) return {0, 0};
  const std::int64_t first_key = mask.first_visible_key(kv_len - query_len);
  return {first_key / block_size, (kv_len + block_size - 1) / block_size};
}

}  // namespace pagesim::kernels

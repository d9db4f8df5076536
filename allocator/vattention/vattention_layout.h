// VattentionLayout: how vAttention lays a model's KV out in virtual memory, and how many
// physical pages one request maps for a given length.
//
// vAttention (Prabhu et al., "vAttention: Dynamic Memory Management for Serving LLMs without
// PagedAttention", ASPLOS'25, arXiv 2405.04437; sections as the arXiv version numbers them)
// keeps the KV cache in virtually contiguous tensors (§5.1): one virtual buffer per layer for
// K and one for V, each shaped
// [max_batch_size, max_context_length, kv_heads, head_dim]; a request owns one row of every
// buffer (its reqId), sized for the maximum context, and physical pages are mapped into that
// row from its start as tokens arrive (§5.2–5.3). The authors' implementation
// (microsoft/vattention, vattention/vattention.cu: init_buffer_sizes, alloc_virtual_tensor,
// grow_kvcache_phys) grows every buffer of a request by one page at a time, so all 2 × layers
// buffers of a request map the same number of pages.
//
// pagesim extends the single-group layout to each alloc::LayerGroup (allocator/layer_group.h),
// buffers of a group growing together:
//   kFull, kSlidingWindow, kChunkedLocal  2 × layers buffers of bytes_per_token bytes per
//                 token (one layer's K, or its V); a request of n tokens maps
//                 ceil(n × bytes_per_token / page) pages in each. vAttention maps and unmaps
//                 only at the end of a request's row, so a windowed group keeps every token
//                 mapped: the keys that fell out of the window stay allocated (out_of_window).
//   kCrossAttention  2 × layers buffers holding the encoder_tokens keys, mapped in full at
//                 admission (ceil(encoder_tokens × bytes_per_token / page) pages each).
//   kRecurrent    one buffer per layer holding its state (state_bytes / layers), mapped in
//                 full at admission. vAttention describes attention only; a per-layer state
//                 buffer is pagesim's natural reading of its layout for recurrent layers.
// Requires: bytes_per_token = kv_bytes_per_token / (2 × layers) exactly (K and V of every layer
// alike), and state_bytes divisible by layers.
//
// Bytes are the unit throughout. A plain immutable value; safe to share across threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "allocator/layer_group.h"
#include "allocator/memory_breakdown.h"

namespace pagesim::alloc {

// The page sizes vAttention supports (§6.1): 2 MiB is the smallest granularity of the stock CUDA
// virtual-memory APIs (cuMemCreate); 64 KiB, 128 KiB and 256 KiB need the paper's modified
// NVIDIA UVM driver (microsoft/vattention README, "Using smaller page sizes").
namespace vattention_pages {
inline constexpr std::int64_t k64KiB = std::int64_t{64} << 10;
inline constexpr std::int64_t k128KiB = std::int64_t{128} << 10;
inline constexpr std::int64_t k256KiB = std::int64_t{256} << 10;
inline constexpr std::int64_t k2MiB = std::int64_t{2} << 20;
}  // namespace vattention_pages

// One layer group as vAttention lays it out.
struct VattentionGroupLayout {
  LayerGroup group;
  std::int64_t buffers = 0;          // virtual buffers: 2 × layers, or layers (kRecurrent)
  std::int64_t bytes_per_token = 0;  // per buffer and token (one layer's K or V); 0 kRecurrent
  std::int64_t fixed_bytes = 0;      // per buffer, whatever the length: encoder keys
                                     // (kCrossAttention) or one layer's state (kRecurrent); else 0
  std::int64_t max_pages = 0;        // pages of one buffer's row (the virtual sub-range of a
                                     // request): the row of max_seq_len tokens, or fixed_bytes,
                                     // rounded up to a page
};

class VattentionLayout {
 public:
  // Throws AllocatorError naming the group (index and kind) or setting that is invalid: no
  // group, page_bytes not a power of two, max_seq_len < 1, a group whose sizes break the
  // requirements above, or a row whose byte size overflows 64 bits.
  VattentionLayout(const LayerGroups& groups, std::int64_t page_bytes, std::int64_t max_seq_len);

  std::int64_t page_bytes() const { return page_bytes_; }
  std::int64_t max_seq_len() const { return max_seq_len_; }
  const std::vector<VattentionGroupLayout>& groups() const { return groups_; }

  // Pages each buffer of group g maps for a request holding `tokens` tokens.
  // REQUIRES: g < groups().size(), 0 <= tokens <= max_seq_len().
  std::int64_t pages_per_buffer(std::size_t g, std::int64_t tokens) const {
    const VattentionGroupLayout& l = groups_[g];
    const std::int64_t bytes = l.fixed_bytes + tokens * l.bytes_per_token;
    return (bytes + page_bytes_ - 1) / page_bytes_;
  }
  // Pages a request holding `tokens` tokens maps over all buffers of all groups.
  // REQUIRES: 0 <= tokens <= max_seq_len(). O(groups).
  std::int64_t request_pages(std::int64_t tokens) const;
  // Pages the rows of one request span over all buffers (its whole virtual reservation).
  std::int64_t max_request_pages() const { return max_request_pages_; }

  // Where the mapped bytes of a request holding `tokens` tokens go: token_states (attended
  // keys, encoder keys), out_of_window (windowed groups' keys no query attends again),
  // recurrent_state, and rounding (the unfilled end of each buffer's last page); the others 0.
  // The classes sum to request_pages(tokens) × page_bytes(). REQUIRES: 0 <= tokens <=
  // max_seq_len(). O(groups), no allocation.
  MemoryBreakdown classify(std::int64_t tokens) const;

 private:
  std::int64_t page_bytes_;
  std::int64_t max_seq_len_;
  std::vector<VattentionGroupLayout> groups_;
  std::int64_t max_request_pages_ = 0;
};

// The most bytes of page rounding one request can carry, whatever its length: for each
// buffer of a token-indexed group, a page minus the smallest positive fill a page can have
// (gcd(bytes_per_token, page) — one token when the token size divides the page); for the
// fixed-size buffers (cross-attention, recurrent) their exact rounding. For one full-attention
// group this is 2 × layers × (page − bytes_per_token): one page per buffer, less one token.
// The paper's per-request figures (Llama-3-8B at TP-1: 128 MB with 2 MB pages, 4 MB with
// 64 KB) count a whole page per buffer, 2 × layers × page; this is one token per buffer less.
// Throws AllocatorError as VattentionLayout does.
std::int64_t worst_case_rounding_bytes(const LayerGroups& groups, std::int64_t page_bytes);

// "64KiB", "2MiB", or the byte count: how names and errors spell a page size.
std::string page_size_name(std::int64_t page_bytes);

}  // namespace pagesim::alloc

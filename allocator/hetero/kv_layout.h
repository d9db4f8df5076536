// KvLayout: how a heterogeneous allocator lays a model's layer groups out in pages — which
// block tables a sequence has, what one page of each table holds, and how pages are cut
// from the pool. The three builders below are the three policies of pagesim issue #15; the
// allocator that drives a layout is GroupedKvAllocator (grouped_kv_allocator.h).
//
// A sequence has one block table per TableGroup. A table is of one of three kinds:
//   kTokens   the decoder tokens: entry i holds tokens [i*B, (i+1)*B) (B = tokens_per_page);
//             which of them the table keeps is `keep` (allocator/layer_group.h): kFull keeps
//             every token, kSlidingWindow / kChunkedLocal drop the pages that fell wholly out
//             of their window or chunk (vLLM v1 SlidingWindowManager / ChunkedLocalAttention-
//             Manager.remove_skipped_blocks, vllm/v1/core/single_type_kv_cache_manager.py)
//   kEncoder  the request's encoder tokens (AdmitRequest::encoder_tokens), B per page, held
//             from admission to free
//   kState    a recurrent group's per-sequence state: ceil(state_bytes / page_bytes) pages
// One page of a kTokens or kEncoder table gives each token `room` bytes split into parts,
// one per layer group it serves; a part's `kv_bytes` of its room hold that group's KV and the
// rest (layers padded to a common size) is rounding. What a filled slot's part is:
//   decoder token, part of a kFull group                          token_states
//   decoder token, kSlidingWindow / kChunkedLocal group           token_states while some
//                                                                 holder still attends it,
//                                                                 else out_of_window
//   decoder token, kCrossAttention / kRecurrent group             unused_layers (all room)
//   encoder token, kCrossAttention group                          token_states
//   encoder token, any other group                                unused_layers (all room)
// Unfilled slots are rounding; a kState page holds state (recurrent_state) and rounding.
//
// Pages: the pool is num_large_pages pages of large_page_bytes, each carved into pages of one
// table's page_bytes when a table needs it (large_page_bytes is a multiple of every table's
// page_bytes). For uniform and hybrid every table has the same page size, so a large page is
// one page; jenga's large page is the least common multiple of the sizes.
//
// Units: capacity_slots() of the allocator = pool bytes / token_bytes, rounded down to whole
// blocks, where token_bytes is what a uniform allocator charges one token: the largest
// per-layer KV of one token over all layers, times the number of layers ("full-attention
// token equivalents"). breakdown() is in bytes: exact, and its classes sum to
// num_large_pages * large_page_bytes.
// Plain values; the builders throw AllocatorError naming the group and the size it refuses.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "allocator/layer_group.h"

namespace pagesim::alloc {

enum class TableKind { kTokens, kEncoder, kState };

// One layer group's share of a table's page.
struct TablePart {
  std::int32_t group = 0;       // index into the model's LayerGroups
  std::int64_t room_bytes = 0;  // kTokens / kEncoder: bytes per token in the page; kState: 0
  std::int64_t kv_bytes = 0;    // of room_bytes, what the group stores (<= room_bytes)
};

struct TableGroup {
  TableKind kind = TableKind::kTokens;
  // kTokens: which tokens the table keeps (kFull, kSlidingWindow or kChunkedLocal) and W / C.
  LayerGroupKind keep = LayerGroupKind::kFull;
  std::int64_t window_tokens = 0;
  std::vector<TablePart> parts;   // kTokens / kEncoder: one per layer group served
  std::int64_t page_bytes = 0;    // kTokens / kEncoder: tokens_per_page * Σ room_bytes
  std::int64_t state_bytes = 0;   // kState: state per sequence held in this table's pages
  bool caches_prefixes = false;   // kTokens: its full prompt pages are prefix-cached
};

struct KvLayout {
  std::string policy;                  // "uniform", "hybrid", "jenga"
  std::vector<TableGroup> tables;
  std::int32_t tokens_per_page = 16;   // B: the allocator's block_size()
  std::int64_t large_page_bytes = 0;   // a multiple of every table's page_bytes
  std::int64_t num_large_pages = 0;
  std::int64_t token_bytes = 0;        // one full-attention token equivalent (capacity unit)
  std::int32_t vllm_group_size = 0;    // hybrid: layers per KV cache group; else 0
};

// The first token table `keep` still needs for a sequence of n tokens (layer_group.h):
// 0 (kFull), max(0, n + 1 - W) (kSlidingWindow), floor(n / C) * C (kChunkedLocal).
std::int64_t first_kept_token(LayerGroupKind keep, std::int64_t window_tokens, std::int64_t n);

// uniform: one decoder table serving every group at token_bytes per token, an encoder table
// of the same pages when a group does cross-attention (vLLM before its hybrid allocator gave
// every layer room for every token, encoder tokens included: RFC vllm-project/vllm#11382,
// "vLLM can only allocate the same KV cache size for all tokens", its mllama figure), and a
// state table of the same pages when a group is recurrent.
KvLayout uniform_layout(const LayerGroups& groups, std::int64_t pool_bytes, std::int32_t block_size);

// hybrid: vLLM v1's KV cache groups (vllm/v1/core/kv_cache_utils.py,
// _get_kv_cache_groups_uniform_page_size): every group has group_size layers, so every page
// has one size; group_size is the fewest layers of any layer group, or the most when
// most < 1.25 * fewest; a layer group of n layers becomes ceil(n / group_size) tables, the
// last padded with empty layers (rounding). Attention groups must share one per-layer KV size
// (vLLM's unify_kv_cache_spec_page_size, which rescales block sizes, is not modelled) — except
// where every group is full attention (DeepSeek-V3.2's latent cache beside its indexer keys):
// then, as vLLM's UniformTypeKVCacheSpecs, one table of every layer, each part its own size. With
// recurrent groups the block grows to the smallest multiple of block_size whose per-layer
// page holds a layer's state, and the state is padded to that page (vLLM's
// HybridAttentionMambaModelConfig; the kernel alignment is taken to be block_size).
KvLayout hybrid_layout(const LayerGroups& groups, std::int64_t pool_bytes, std::int32_t block_size);

// jenga: one table per layer group, pages of block_size * kv_bytes_per_token (kState:
// state_bytes), large pages of the least common multiple of them (Jenga, arXiv 2503.18292,
// two-level allocator). Throws when the LCM exceeds pool_bytes.
KvLayout jenga_layout(const LayerGroups& groups, std::int64_t pool_bytes, std::int32_t block_size);

}  // namespace pagesim::alloc

// PagedAttentionParams: the fields every paged-attention kernel takes (queries, outputs,
// the paged cache, block table, lengths, options), and the host function that fills them
// from validated arguments. DecodeParams and PrefillParams extend it. Device pointers;
// strides and offsets in elements.
#pragma once

#include <cstdint>

#include "kernels/attention_args.h"
#include "kernels/cuda/device_common.cuh"
#include "kernels/kv_layout.h"

namespace pagesim::kernels::detail {

struct PagedAttentionParams {
  const void* query = nullptr;  // [num_query_tokens, num_q_heads, head_dim]
  std::int64_t q_stride_token = 0;
  std::int64_t q_stride_head = 0;
  void* out = nullptr;          // [num_query_tokens, num_q_heads, head_dim]
  std::int64_t o_stride_token = 0;
  std::int64_t o_stride_head = 0;
  const void* k_cache = nullptr;
  const void* v_cache = nullptr;
  KvCacheGeometry geo;
  int block_shift = 0;          // log2(block_size)
  BlockTableView table;
  const std::int32_t* kv_lens = nullptr;
  const float* alibi_slopes = nullptr;  // [num_q_heads] or null
  float scale_log2 = 0;         // scale * log2(e): scores are kept in base 2
  std::int32_t num_q_heads = 0;
  std::int32_t num_kv_heads = 0;
  std::int32_t group_size = 0;  // num_q_heads / num_kv_heads
  MaskKind mask_kind = MaskKind::kCausal;  // beyond causality (attention_mask.h)
  std::int32_t mask_window = 0;            // W or C tokens; 0 for causal
};

// The first key a query at position `pos` sees: AttentionMask::first_visible_key on the
// device. Keys before it are masked and their blocks never read (they may be freed).
__device__ __forceinline__ int first_visible_key(const PagedAttentionParams& p, int pos) {
  if (p.mask_kind == MaskKind::kSlidingWindow) return max(0, pos - p.mask_window + 1);
  if (p.mask_kind == MaskKind::kChunkedLocal) return pos < 0 ? 0 : pos / p.mask_window * p.mask_window;
  return 0;
}

// REQUIRES: `a` passed check_paged_attention_args(..., Backend::kCuda) with result `s`.
inline PagedAttentionParams make_attention_params(const PagedAttentionArgs& a, const AttentionShape& s,
                                                  const char* fn) {
  PagedAttentionParams p;
  p.query = a.query.data;
  p.q_stride_token = a.query.stride[0];
  p.q_stride_head = a.query.stride[1];
  p.out = a.out.data;
  p.o_stride_token = a.out.stride[0];
  p.o_stride_head = a.out.stride[1];
  p.k_cache = a.k_cache.data;
  p.v_cache = a.v_cache.data;
  p.geo = kv_cache_geometry(a.k_cache, fn);
  while ((1 << p.block_shift) < s.block_size) ++p.block_shift;
  p.table = BlockTableView{a.block_table.as<const std::int32_t>(), a.block_table.stride[0]};
  p.kv_lens = a.kv_lens.as<const std::int32_t>();
  p.alibi_slopes = a.alibi_slopes.empty() ? nullptr : a.alibi_slopes.as<const float>();
  p.scale_log2 = a.scale * kLog2e;
  p.num_q_heads = s.num_q_heads;
  p.num_kv_heads = s.num_kv_heads;
  p.group_size = s.group_size();
  p.mask_kind = a.mask.kind;
  p.mask_window = a.mask.window;
  return p;
}

}  // namespace pagesim::kernels::detail

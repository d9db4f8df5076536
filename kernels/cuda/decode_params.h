// DecodeParams: the plain parameter struct of the decode kernel family (v1, v2 and the v2
// merge), filled by the launcher from validated arguments and a plan. Device pointers;
// strides and offsets in elements.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/kv_layout.h"

namespace pagesim::kernels::detail {

struct DecodeParams {
  const void* query = nullptr;  // [num_seqs, num_q_heads, head_dim]
  std::int64_t q_stride_seq = 0;
  std::int64_t q_stride_head = 0;
  void* out = nullptr;          // [num_seqs, num_q_heads, head_dim]
  std::int64_t o_stride_seq = 0;
  std::int64_t o_stride_head = 0;
  const void* k_cache = nullptr;
  const void* v_cache = nullptr;
  KvCacheGeometry geo;
  int block_shift = 0;          // log2(block_size)
  BlockTableView table;
  const std::int32_t* kv_lens = nullptr;
  const float* alibi_slopes = nullptr;  // [num_q_heads] or null
  float scale_log2 = 0;         // scale * log2(e): scores are kept in base 2
  std::int32_t num_seqs = 0;
  std::int32_t num_q_heads = 0;
  std::int32_t num_kv_heads = 0;
  std::int32_t group_size = 0;  // num_q_heads / num_kv_heads
  std::int32_t head_groups = 1; // CTAs per KV head (each takes heads_per_cta query heads)
  std::int32_t head_dim = 0;
  std::int32_t partition_size = 0;  // 0: v1 (whole sequence, writes out); > 0: v2
  std::int32_t max_partitions = 1;
  float* partial_out = nullptr;  // v2: [num_seqs, num_q_heads, max_partitions, head_dim]
  float* partial_lse = nullptr;  // v2: [num_seqs, num_q_heads, max_partitions], base-2 LSE
};

// Defined by the explicit instantiations in decode_{f32,f16,bf16}.cu.
template <class T, int D>
void launch_decode_kernel(const DecodeParams& p, cudaStream_t stream);
template <class T, int D>
int decode_ctas_per_sm();

// Defined in decode_launch.cu.
template <class T>
void launch_decode_merge(const DecodeParams& p, cudaStream_t stream);

}  // namespace pagesim::kernels::detail

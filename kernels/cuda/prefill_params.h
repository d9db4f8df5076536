// PrefillParams: the plain parameter struct of the paged prefill kernel family, filled by
// the launcher from validated arguments and a plan. Device pointers; strides in elements.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/kv_layout.h"

namespace pagesim::kernels::detail {

struct PrefillParams {
  const void* query = nullptr;  // [num_query_tokens, num_q_heads, head_dim]
  std::int64_t q_stride_token = 0;
  std::int64_t q_stride_head = 0;
  void* out = nullptr;
  std::int64_t o_stride_token = 0;
  std::int64_t o_stride_head = 0;
  const void* k_cache = nullptr;
  const void* v_cache = nullptr;
  KvCacheGeometry geo;
  int block_shift = 0;
  BlockTableView table;
  const std::int32_t* kv_lens = nullptr;
  const std::int32_t* query_starts = nullptr;  // [num_seqs + 1]
  const float* alibi_slopes = nullptr;
  float scale_log2 = 0;
  std::int32_t num_q_heads = 0;
  std::int32_t num_kv_heads = 0;
  std::int32_t group_size = 0;
  std::int32_t row_tiles = 0;  // grid.x; tile i runs as blockIdx.x = row_tiles - 1 - i
};

// Tensor-core kernel (T = __half, __nv_bfloat16): prefill_{f16,bf16}.cu.
template <class T, int D>
void launch_prefill_mma(const PrefillParams& p, dim3 grid, std::size_t smem, cudaStream_t stream);
// CUDA-core fp32 kernel: prefill_f32.cu.
template <int D>
void launch_prefill_simt(const PrefillParams& p, dim3 grid, std::size_t smem, cudaStream_t stream);

}  // namespace pagesim::kernels::detail

// DecodeParams: the plain parameter struct of the decode kernel family (v1, v2 and the v2
// merge): the common paged-attention fields plus the plan's split. Filled by the launcher
// from validated arguments and a plan.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/attention_params.h"
#include "kernels/decode_plan.h"

namespace pagesim::kernels::detail {

struct DecodeParams : PagedAttentionParams {  // query/out rows: one per sequence
  std::int32_t num_seqs = 0;
  DecodeKernel kernel = DecodeKernel::kCudaCores;
  std::int32_t heads_per_cta = 1;  // decode_heads_per_cta(kernel, group_size)
  std::int32_t head_groups = 1; // CTAs per KV head (each takes heads_per_cta query heads)
  std::int32_t head_dim = 0;
  std::int32_t partition_size = 0;  // 0: v1 (whole sequence, writes out); > 0: v2
  std::int32_t max_partitions = 1;
  float* partial_out = nullptr;  // v2: [num_seqs, num_q_heads, max_partitions, head_dim]
  float* partial_lse = nullptr;  // v2: [num_seqs, num_q_heads, max_partitions], base-2 LSE
};

// Defined by the explicit instantiations in decode_{f32,f16,bf16}.cu (decode_dispatch.cuh).
// Launches p.kernel with p.heads_per_cta heads per CTA; `grid` is decode_kernel_grid() of the
// plan, already checked against CUDA's limits. Returns the status of the kernel's attribute
// set-up (the launch itself is checked by the caller).
template <class T, int D>
cudaError_t launch_decode_kernel(const DecodeParams& p, dim3 grid, cudaStream_t stream);
// CTAs of `kernel` (with `heads` per CTA) one SM runs at once; -1 if the query failed.
template <class T, int D>
int decode_ctas_per_sm(DecodeKernel kernel, int heads);

// Defined in decode_launch.cu. `grid` is decode_merge_grid() (x = sequence, y = query head),
// already checked.
template <class T>
void launch_decode_merge(const DecodeParams& p, dim3 grid, cudaStream_t stream);

}  // namespace pagesim::kernels::detail

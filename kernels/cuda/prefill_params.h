// PrefillParams: the plain parameter struct of the paged prefill kernel family: the common
// paged-attention fields plus the packed query rows. Filled by the launcher from validated
// arguments and a plan.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/attention_params.h"

namespace pagesim::kernels::detail {

struct PrefillParams : PagedAttentionParams {
  const std::int32_t* query_starts = nullptr;  // [num_seqs + 1]
  std::int32_t row_tiles = 0;  // grid.x; tile i runs as blockIdx.x = row_tiles - 1 - i
};

// Both raise the kernel's dynamic shared-memory limit to `smem`, then launch. They return
// that cudaFuncSetAttribute's status and launch nothing when it failed; launch errors are
// left for cudaGetLastError (check_launch).
// Tensor-core kernel (T = __half, __nv_bfloat16): prefill_{f16,bf16}.cu.
template <class T, int D>
cudaError_t launch_prefill_mma(const PrefillParams& p, dim3 grid, std::size_t smem, cudaStream_t stream);
// Hopper wgmma kernel at head_dim 128 (T = __half, __nv_bfloat16): prefill_{f16,bf16}.cu.
// REQUIRES device_runs_wgmma().
template <class T>
cudaError_t launch_prefill_wgmma(const PrefillParams& p, dim3 grid, std::size_t smem, cudaStream_t stream);
// Whether the current device is compute capability 9.0 and this build holds sm_90a code
// (PAGESIM_CUDA_SM90A), so the wgmma kernel runs; false when no device is usable.
bool device_runs_wgmma();
// CUDA-core fp32 kernel: prefill_f32.cu.
template <int D>
cudaError_t launch_prefill_simt(const PrefillParams& p, dim3 grid, std::size_t smem, cudaStream_t stream);

}  // namespace pagesim::kernels::detail

// The decode launchers' dispatch from a plan's kernel to the CUDA-core or tensor-core decode
// kernel — included only by the decode_<dtype>.cu instantiation files (f32 has no
// tensor-core kernel; the plan never asks for one).
#pragma once

#include <type_traits>

#include "kernels/cuda/decode_kernel.cuh"
#include "kernels/cuda/decode_mma.cuh"

namespace pagesim::kernels::detail {

template <class T, int D>
cudaError_t launch_decode_kernel(const DecodeParams& p, dim3 grid, cudaStream_t stream) {
  if constexpr (sizeof(T) == 2) {
    if (p.kernel == DecodeKernel::kTensorCores) return launch_decode_mma<T, D>(p, grid, stream);
  }
  launch_decode_simt<T, D>(p, grid, stream);
  return cudaSuccess;
}

template <class T, int D>
int decode_ctas_per_sm(DecodeKernel kernel, int heads) {
  if constexpr (sizeof(T) == 2) {
    if (kernel == DecodeKernel::kTensorCores) return decode_mma_ctas_per_sm<T, D>();
  }
  return decode_simt_ctas_per_sm<T, D>(heads);
}

#define PAGESIM_INSTANTIATE_DECODE(T, D)                                                    \
  template cudaError_t launch_decode_kernel<T, D>(const DecodeParams&, dim3, cudaStream_t); \
  template int decode_ctas_per_sm<T, D>(DecodeKernel, int);

}  // namespace pagesim::kernels::detail

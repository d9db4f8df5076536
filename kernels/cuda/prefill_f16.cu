// Explicit instantiations of the tensor-core prefill kernel for __half.
#include "kernels/cuda/prefill_mma.cuh"

namespace pagesim::kernels::detail {
PAGESIM_INSTANTIATE_PREFILL_MMA(__half, 64)
PAGESIM_INSTANTIATE_PREFILL_MMA(__half, 80)
PAGESIM_INSTANTIATE_PREFILL_MMA(__half, 96)
PAGESIM_INSTANTIATE_PREFILL_MMA(__half, 112)
PAGESIM_INSTANTIATE_PREFILL_MMA(__half, 128)
PAGESIM_INSTANTIATE_PREFILL_MMA(__half, 256)
}  // namespace pagesim::kernels::detail

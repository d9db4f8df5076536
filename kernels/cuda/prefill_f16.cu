// Explicit instantiations of the tensor-core prefill kernels (mma.sync, wgmma) for __half.
#include "kernels/cuda/prefill_mma.cuh"
#include "kernels/cuda/prefill_wgmma.cuh"

namespace pagesim::kernels::detail {
PAGESIM_INSTANTIATE_PREFILL_MMA(__half, 64)
PAGESIM_INSTANTIATE_PREFILL_MMA(__half, 80)
PAGESIM_INSTANTIATE_PREFILL_MMA(__half, 96)
PAGESIM_INSTANTIATE_PREFILL_MMA(__half, 112)
PAGESIM_INSTANTIATE_PREFILL_MMA(__half, 128)
PAGESIM_INSTANTIATE_PREFILL_MMA(__half, 256)
PAGESIM_INSTANTIATE_PREFILL_WGMMA(__half)
}  // namespace pagesim::kernels::detail

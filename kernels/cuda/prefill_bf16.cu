// Explicit instantiations of the tensor-core prefill kernels (mma.sync, wgmma) for __nv_bfloat16.
#include "kernels/cuda/prefill_mma.cuh"
#include "kernels/cuda/prefill_wgmma.cuh"

namespace pagesim::kernels::detail {
PAGESIM_INSTANTIATE_PREFILL_MMA(__nv_bfloat16, 64)
PAGESIM_INSTANTIATE_PREFILL_MMA(__nv_bfloat16, 80)
PAGESIM_INSTANTIATE_PREFILL_MMA(__nv_bfloat16, 96)
PAGESIM_INSTANTIATE_PREFILL_MMA(__nv_bfloat16, 112)
PAGESIM_INSTANTIATE_PREFILL_MMA(__nv_bfloat16, 128)
PAGESIM_INSTANTIATE_PREFILL_MMA(__nv_bfloat16, 256)
PAGESIM_INSTANTIATE_PREFILL_WGMMA(__nv_bfloat16)
}  // namespace pagesim::kernels::detail

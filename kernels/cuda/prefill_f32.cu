// Explicit instantiations of the fp32 CUDA-core prefill kernel.
#include "kernels/cuda/prefill_simt.cuh"

namespace pagesim::kernels::detail {
PAGESIM_INSTANTIATE_PREFILL_SIMT(64)
PAGESIM_INSTANTIATE_PREFILL_SIMT(80)
PAGESIM_INSTANTIATE_PREFILL_SIMT(96)
PAGESIM_INSTANTIATE_PREFILL_SIMT(112)
PAGESIM_INSTANTIATE_PREFILL_SIMT(128)
PAGESIM_INSTANTIATE_PREFILL_SIMT(256)
}  // namespace pagesim::kernels::detail

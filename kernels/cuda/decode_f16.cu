// Explicit instantiations of the decode kernel for __half (one file per dtype: parallel builds).
#include "kernels/cuda/decode_dispatch.cuh"

namespace pagesim::kernels::detail {
PAGESIM_INSTANTIATE_DECODE(__half, 64)
PAGESIM_INSTANTIATE_DECODE(__half, 80)
PAGESIM_INSTANTIATE_DECODE(__half, 96)
PAGESIM_INSTANTIATE_DECODE(__half, 112)
PAGESIM_INSTANTIATE_DECODE(__half, 128)
PAGESIM_INSTANTIATE_DECODE(__half, 256)
}  // namespace pagesim::kernels::detail

// Explicit instantiations of the decode kernel for float (one file per dtype: parallel builds).
#include "kernels/cuda/decode_dispatch.cuh"

namespace pagesim::kernels::detail {
PAGESIM_INSTANTIATE_DECODE(float, 64)
PAGESIM_INSTANTIATE_DECODE(float, 80)
PAGESIM_INSTANTIATE_DECODE(float, 96)
PAGESIM_INSTANTIATE_DECODE(float, 112)
PAGESIM_INSTANTIATE_DECODE(float, 128)
PAGESIM_INSTANTIATE_DECODE(float, 256)
}  // namespace pagesim::kernels::detail

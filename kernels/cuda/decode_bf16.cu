// Explicit instantiations of the decode kernel for __nv_bfloat16 (one file per dtype: parallel builds).
#include "kernels/cuda/decode_dispatch.cuh"

namespace pagesim::kernels::detail {
PAGESIM_INSTANTIATE_DECODE(__nv_bfloat16, 64)
PAGESIM_INSTANTIATE_DECODE(__nv_bfloat16, 80)
PAGESIM_INSTANTIATE_DECODE(__nv_bfloat16, 96)
PAGESIM_INSTANTIATE_DECODE(__nv_bfloat16, 112)
PAGESIM_INSTANTIATE_DECODE(__nv_bfloat16, 128)
PAGESIM_INSTANTIATE_DECODE(__nv_bfloat16, 256)
}  // namespace pagesim::kernels::detail

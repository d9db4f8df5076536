// CPU reference of the KV-cache operations (cache_op_args.h): element-wise copies over host
// memory, honouring any strides. They also check on the host what the CUDA versions cannot:
// every slot and block id in range, copy_blocks destinations unique and not sources.
// Throw KernelError naming the first bad entry, before writing anything.
#pragma once

#include "kernels/cache_op_args.h"

namespace pagesim::kernels {

void reference_reshape_and_cache(const ReshapeAndCacheArgs& args);
void reference_copy_blocks(const CopyBlocksArgs& args);
void reference_swap_blocks(const SwapBlocksArgs& args);

}  // namespace pagesim::kernels

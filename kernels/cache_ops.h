// CUDA KV-cache operations (arguments and semantics: cache_op_args.h).
//
// reshape_and_cache and copy_blocks are single kernel launches over device memory;
// swap_blocks issues cudaMemcpyAsync calls (one per run of consecutive block pairs, for K
// and for V) between a device cache and a pinned host cache (or two device caches).
// All are asynchronous on `stream`. Host-visible arguments are validated first (KernelError);
// device-side slot and block ids out of range are skipped by the kernels, never written out
// of bounds — REQUIRES they are in range (the reference functions check this on the host).
#pragma once

#include "kernels/cache_op_args.h"
#include "kernels/paged_attention.h"

namespace pagesim::kernels {

void reshape_and_cache(const ReshapeAndCacheArgs& args, CudaStream stream);
void copy_blocks(const CopyBlocksArgs& args, CudaStream stream);
// REQUIRES: block_pairs in host memory; each cache pointer is device memory or pinned host
// memory (cudaHostAlloc / cudaHostRegister); source and destination do not overlap.
void swap_blocks(const SwapBlocksArgs& args, CudaStream stream);

}  // namespace pagesim::kernels

// Arguments of the KV-cache operations and their validation.
//
// reshape_and_cache writes the K/V of new tokens into their slots; copy_blocks duplicates
// blocks inside one cache (copy-on-write after a fork); swap_blocks moves blocks between a
// device cache and a pinned host cache (preemption by swapping). The CUDA functions live
// in cache_ops.h, the host reference in reference_cache_ops.h; both take these structs.
// Caches follow kv_layout.h.
#pragma once

#include <cstdint>

#include "kernels/attention_args.h"
#include "kernels/tensor_view.h"

namespace pagesim::kernels {

struct ReshapeAndCacheArgs {
  TensorView key;           // [num_tokens, num_kv_heads, head_dim]
  TensorView value;         // [num_tokens, num_kv_heads, head_dim]
  TensorView k_cache;       // [num_blocks, num_kv_heads, block_size, head_dim], written
  TensorView v_cache;       // same shape and strides as k_cache, written
  TensorView slot_mapping;  // i64 [num_tokens]: slot_id(block, offset) (kv_layout.h) of each
                            // token; negative (-1) = skip the token (padding)
};

struct CopyBlocksArgs {
  TensorView k_cache;      // written in place
  TensorView v_cache;      // same shape and strides as k_cache
  TensorView block_pairs;  // i32 [num_pairs, 2]: (src, dst). REQUIRES: no dst appears twice or
                           // as a src (the copies of one call run concurrently)
};

struct SwapBlocksArgs {
  TensorView src_k_cache;  // [src_blocks, num_kv_heads, block_size, head_dim]
  TensorView src_v_cache;
  TensorView dst_k_cache;  // [dst_blocks, num_kv_heads, block_size, head_dim], written
  TensorView dst_v_cache;
  TensorView block_pairs;  // i32 [num_pairs, 2] (src block, dst block), in HOST memory
};

struct CacheOpShape {
  std::int64_t count = 0;  // tokens (reshape_and_cache) or block pairs
  std::int32_t num_kv_heads = 0;
  std::int32_t block_size = 0;
  std::int32_t head_dim = 0;
  DType dtype = DType::kFloat32;
};

// Shape, dtype and stride checks, reading no tensor data except swap_blocks' host-side
// block_pairs (ids must be in range). Throw KernelError naming `fn` and the argument.
CacheOpShape check_reshape_and_cache_args(const ReshapeAndCacheArgs& args, const char* fn,
                                          Backend backend);
CacheOpShape check_copy_blocks_args(const CopyBlocksArgs& args, const char* fn, Backend backend);
CacheOpShape check_swap_blocks_args(const SwapBlocksArgs& args, const char* fn, Backend backend);

// True if every block of `cache` is one dense byte range (kHND or kNHD stored densely), so a
// block moves with one memcpy.
bool blocks_are_dense(const TensorView& cache);

}  // namespace pagesim::kernels

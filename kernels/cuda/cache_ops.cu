// CUDA KV-cache operations: reshape_and_cache and copy_blocks kernels (dtype-agnostic byte
// copies in 16-byte vectors), swap_blocks as batched cudaMemcpyAsync runs.
#include <cuda_runtime.h>

#include <string>

#include "kernels/arg_check.h"
#include "kernels/cache_ops.h"
#include "kernels/cuda/cuda_host.h"
#include "kernels/kv_layout.h"

namespace pagesim::kernels {

namespace detail {
namespace {

constexpr int kCacheOpThreads = 128;

struct ReshapeParams {
  const char* key = nullptr;
  const char* value = nullptr;
  std::int64_t key_stride_token = 0;  // bytes
  std::int64_t key_stride_head = 0;
  std::int64_t value_stride_token = 0;
  std::int64_t value_stride_head = 0;
  char* k_cache = nullptr;
  char* v_cache = nullptr;
  KvCacheGeometry geo;  // elements
  std::int32_t elem_bytes = 0;
  std::int32_t vecs_per_row = 0;  // 16-byte vectors per head row
  const std::int64_t* slots = nullptr;
};

// One CTA per token: copies its K and V rows (all KV heads) into the slot's rows.
__global__ void __launch_bounds__(kCacheOpThreads) reshape_and_cache_kernel(const ReshapeParams p) {
  const std::int64_t t = blockIdx.x;
  const std::int64_t slot = p.slots[t];
  if (slot < 0 || slot >= p.geo.num_slots()) return;  // -1: padding; out of range: skipped
  const std::int64_t block = slot / p.geo.block_size;
  const std::int64_t in_block = slot % p.geo.block_size;
  const int n = p.geo.num_kv_heads * p.vecs_per_row;
  for (int i = static_cast<int>(threadIdx.x); i < n; i += kCacheOpThreads) {
    const int h = i / p.vecs_per_row;
    const int c = i % p.vecs_per_row;
    const std::int64_t dst = p.geo.offset(block, h, in_block) * p.elem_bytes + c * 16;
    const uint4 k = *reinterpret_cast<const uint4*>(p.key + t * p.key_stride_token + h * p.key_stride_head + c * 16);
    const uint4 v = *reinterpret_cast<const uint4*>(p.value + t * p.value_stride_token + h * p.value_stride_head + c * 16);
    *reinterpret_cast<uint4*>(p.k_cache + dst) = k;
    *reinterpret_cast<uint4*>(p.v_cache + dst) = v;
  }
}

struct CopyParams {
  char* k_cache = nullptr;
  char* v_cache = nullptr;
  KvCacheGeometry geo;
  std::int32_t elem_bytes = 0;
  std::int32_t vecs_per_row = 0;
  const std::int32_t* pairs = nullptr;  // [num_pairs, 2]
};

// One CTA per (pair, K or V): copies every row of the source block to the destination.
__global__ void __launch_bounds__(kCacheOpThreads) copy_blocks_kernel(const CopyParams p) {
  const std::int32_t src = p.pairs[2 * blockIdx.x];
  const std::int32_t dst = p.pairs[2 * blockIdx.x + 1];
  if (src < 0 || dst < 0 || src >= p.geo.num_blocks || dst >= p.geo.num_blocks) return;
  char* cache = blockIdx.y == 0 ? p.k_cache : p.v_cache;
  const int rows = p.geo.num_kv_heads * p.geo.block_size;
  const int n = rows * p.vecs_per_row;
  for (int i = static_cast<int>(threadIdx.x); i < n; i += kCacheOpThreads) {
    const int row = i / p.vecs_per_row;
    const int c = i % p.vecs_per_row;
    const int h = row / p.geo.block_size;
    const int s = row % p.geo.block_size;
    const std::int64_t from = p.geo.offset(src, h, s) * p.elem_bytes + c * 16;
    const std::int64_t to = p.geo.offset(dst, h, s) * p.elem_bytes + c * 16;
    *reinterpret_cast<uint4*>(cache + to) = *reinterpret_cast<const uint4*>(cache + from);
  }
}

}  // namespace
}  // namespace detail

using detail::require;

void reshape_and_cache(const ReshapeAndCacheArgs& a, CudaStream stream) {
  const char* fn = "reshape_and_cache";
  const CacheOpShape s = check_reshape_and_cache_args(a, fn, Backend::kCuda);
  if (s.count == 0) return;
  const auto elem = static_cast<std::int64_t>(dtype_size(s.dtype));
  detail::ReshapeParams p;
  p.key = static_cast<const char*>(a.key.data);
  p.value = static_cast<const char*>(a.value.data);
  p.key_stride_token = a.key.stride[0] * elem;
  p.key_stride_head = a.key.stride[1] * elem;
  p.value_stride_token = a.value.stride[0] * elem;
  p.value_stride_head = a.value.stride[1] * elem;
  p.k_cache = static_cast<char*>(a.k_cache.data);
  p.v_cache = static_cast<char*>(a.v_cache.data);
  p.geo = kv_cache_geometry(a.k_cache, fn);
  p.elem_bytes = static_cast<std::int32_t>(elem);
  p.vecs_per_row = static_cast<std::int32_t>(s.head_dim * elem / 16);
  p.slots = a.slot_mapping.as<const std::int64_t>();
  detail::reshape_and_cache_kernel<<<static_cast<unsigned>(s.count), detail::kCacheOpThreads, 0, stream>>>(p);
  check_launch(fn, "reshape_and_cache_kernel");
}

void copy_blocks(const CopyBlocksArgs& a, CudaStream stream) {
  const char* fn = "copy_blocks";
  const CacheOpShape s = check_copy_blocks_args(a, fn, Backend::kCuda);
  if (s.count == 0) return;
  const auto elem = static_cast<std::int32_t>(dtype_size(s.dtype));
  detail::CopyParams p;
  p.k_cache = static_cast<char*>(a.k_cache.data);
  p.v_cache = static_cast<char*>(a.v_cache.data);
  p.geo = kv_cache_geometry(a.k_cache, fn);
  p.elem_bytes = elem;
  p.vecs_per_row = s.head_dim * elem / 16;
  p.pairs = a.block_pairs.as<const std::int32_t>();
  detail::copy_blocks_kernel<<<dim3(static_cast<unsigned>(s.count), 2), detail::kCacheOpThreads, 0, stream>>>(p);
  check_launch(fn, "copy_blocks_kernel");
}

namespace {

void require_cuda_visible(const TensorView& v, const char* fn, const char* name) {
  cudaPointerAttributes attr{};
  check_cuda(cudaPointerGetAttributes(&attr, v.data), fn, "cudaPointerGetAttributes");
  require(attr.type != cudaMemoryTypeUnregistered, fn,
          [&] { return std::string(name) + " is neither device memory nor pinned host memory"; });
}

}  // namespace

void swap_blocks(const SwapBlocksArgs& a, CudaStream stream) {
  const char* fn = "swap_blocks";
  const CacheOpShape s = check_swap_blocks_args(a, fn, Backend::kCuda);
  if (s.count == 0) return;
  require_cuda_visible(a.src_k_cache, fn, "src_k_cache");
  require_cuda_visible(a.src_v_cache, fn, "src_v_cache");
  require_cuda_visible(a.dst_k_cache, fn, "dst_k_cache");
  require_cuda_visible(a.dst_v_cache, fn, "dst_v_cache");
  const auto elem = static_cast<std::int64_t>(dtype_size(s.dtype));
  const std::int64_t src_block_bytes = a.src_k_cache.stride[0] * elem;
  const std::int64_t dst_block_bytes = a.dst_k_cache.stride[0] * elem;
  require(src_block_bytes == dst_block_bytes, fn, "source and destination blocks differ in size");
  const auto* pairs = a.block_pairs.as<const std::int32_t>();
  auto copy = [&](const TensorView& dst, const TensorView& src, std::int64_t dst_block, std::int64_t src_block,
                  std::int64_t blocks) {
    check_cuda(cudaMemcpyAsync(static_cast<char*>(dst.data) + dst_block * dst_block_bytes,
                                       static_cast<const char*>(src.data) + src_block * src_block_bytes,
                                       static_cast<std::size_t>(blocks * src_block_bytes), cudaMemcpyDefault,
                                       stream),
                       fn, "cudaMemcpyAsync");
  };
  // One copy per run of pairs that are consecutive on both sides.
  for (std::int64_t i = 0; i < s.count;) {
    std::int64_t run = 1;
    while (i + run < s.count && pairs[2 * (i + run)] == pairs[2 * i] + run &&
           pairs[2 * (i + run) + 1] == pairs[2 * i + 1] + run) {
      ++run;
    }
    copy(a.dst_k_cache, a.src_k_cache, pairs[2 * i + 1], pairs[2 * i], run);
    copy(a.dst_v_cache, a.src_v_cache, pairs[2 * i + 1], pairs[2 * i], run);
    i += run;
  }
}

}  // namespace pagesim::kernels

#include "kernels/cache_op_args.h"

#include <string>

#include "kernels/arg_check.h"
#include "kernels/kv_layout.h"
#include "kernels/limits.h"

namespace pagesim::kernels {

using detail::expect_dim;
using detail::expect_float_tensor;
using detail::expect_inner_contiguous;
using detail::expect_row_aligned;
using detail::expect_tensor;
using detail::require;

namespace {

// K and V caches: same shape, strides and dtype. Returns the geometry of k.
KvCacheGeometry check_cache_pair(const TensorView& k, const TensorView& v, const char* fn,
                                 const char* k_name, const char* v_name, Backend backend) {
  expect_float_tensor(k, fn, k_name, 4);
  expect_float_tensor(v, fn, v_name, 4);
  const KvCacheGeometry g = kv_cache_geometry(k, fn);
  kv_cache_geometry(v, fn);
  for (int d = 0; d < 4; ++d) {
    const auto i = static_cast<std::size_t>(d);
    require(k.shape[i] == v.shape[i] && k.stride[i] == v.stride[i] && k.dtype == v.dtype, fn,
            [&] { return std::string(v_name) + " must have the shape, strides and dtype of " + k_name + ": " +
                k.describe() + " vs " + v.describe(); });
  }
  if (backend == Backend::kCuda) {
    expect_row_aligned(k, fn, k_name);
    expect_row_aligned(v, fn, v_name);
  }
  return g;
}

void check_pairs(const TensorView& pairs, const char* fn) {
  expect_tensor(pairs, fn, "block_pairs", 2, DType::kInt32);
  expect_dim(pairs, fn, "block_pairs", 1, 2, "(src, dst)");
  require(pairs.shape[0] <= 1 || (pairs.stride[0] == 2 && pairs.stride[1] == 1), fn,
          [&] { return "block_pairs must be contiguous, got " + pairs.describe(); });
}

}  // namespace

bool blocks_are_dense(const TensorView& cache) {
  if (cache.rank != 4 || cache.stride[3] != 1) return false;
  const std::int64_t h = cache.shape[1], b = cache.shape[2], d = cache.shape[3];
  if (cache.stride[0] != h * b * d) return false;
  const bool hnd = (h <= 1 || cache.stride[1] == b * d) && (b <= 1 || cache.stride[2] == d);
  const bool nhd = (h <= 1 || cache.stride[1] == d) && (b <= 1 || cache.stride[2] == h * d);
  return hnd || nhd;
}

CacheOpShape check_reshape_and_cache_args(const ReshapeAndCacheArgs& a, const char* fn,
                                          Backend backend) {
  const KvCacheGeometry g = check_cache_pair(a.k_cache, a.v_cache, fn, "k_cache", "v_cache", backend);
  expect_float_tensor(a.key, fn, "key", 3);
  expect_float_tensor(a.value, fn, "value", 3);
  expect_inner_contiguous(a.key, fn, "key");
  expect_inner_contiguous(a.value, fn, "value");
  for (int d = 0; d < 3; ++d) {
    expect_dim(a.value, fn, "value", d, a.key.shape[static_cast<std::size_t>(d)], "same as key");
  }
  expect_dim(a.key, fn, "key", 1, g.num_kv_heads, "num_kv_heads, as in k_cache");
  expect_dim(a.key, fn, "key", 2, g.head_dim, "head_dim, as in k_cache");
  require(a.key.dtype == a.k_cache.dtype && a.value.dtype == a.k_cache.dtype, fn,
          [&] { return "key and value must have the cache's dtype: key " + a.key.describe() + ", k_cache " +
              a.k_cache.describe(); });
  expect_tensor(a.slot_mapping, fn, "slot_mapping", 1, DType::kInt64);
  expect_dim(a.slot_mapping, fn, "slot_mapping", 0, a.key.shape[0], "num_tokens, as in key");
  require(a.slot_mapping.shape[0] <= 1 || a.slot_mapping.stride[0] == 1, fn,
          [&] { return "slot_mapping must be contiguous, got " + a.slot_mapping.describe(); });
  require(a.key.shape[0] <= INT32_MAX, fn, [&] { return "more than 2^31-1 tokens: " + a.key.describe(); });
  if (backend == Backend::kCuda) {
    expect_row_aligned(a.key, fn, "key");
    expect_row_aligned(a.value, fn, "value");
  }
  return {a.key.shape[0], g.num_kv_heads, g.block_size, g.head_dim, a.key.dtype};
}

CacheOpShape check_copy_blocks_args(const CopyBlocksArgs& a, const char* fn, Backend backend) {
  const KvCacheGeometry g = check_cache_pair(a.k_cache, a.v_cache, fn, "k_cache", "v_cache", backend);
  check_pairs(a.block_pairs, fn);
  require(a.block_pairs.shape[0] <= INT32_MAX, fn, "too many block pairs");
  return {a.block_pairs.shape[0], g.num_kv_heads, g.block_size, g.head_dim, a.k_cache.dtype};
}

CacheOpShape check_swap_blocks_args(const SwapBlocksArgs& a, const char* fn, Backend backend) {
  const KvCacheGeometry s =
      check_cache_pair(a.src_k_cache, a.src_v_cache, fn, "src_k_cache", "src_v_cache", backend);
  const KvCacheGeometry d =
      check_cache_pair(a.dst_k_cache, a.dst_v_cache, fn, "dst_k_cache", "dst_v_cache", backend);
  require(s.num_kv_heads == d.num_kv_heads && s.block_size == d.block_size &&
              s.head_dim == d.head_dim && a.src_k_cache.dtype == a.dst_k_cache.dtype,
          fn, [&] { return "source and destination caches must agree in heads, block size, head_dim and dtype: " +
                  a.src_k_cache.describe() + " vs " + a.dst_k_cache.describe(); });
  if (backend == Backend::kCuda) {
    require(blocks_are_dense(a.src_k_cache) && blocks_are_dense(a.dst_k_cache), fn,
            [&] { return "swap_blocks needs caches whose blocks are dense byte ranges (kHND or kNHD), got " +
                a.src_k_cache.describe() + " and " + a.dst_k_cache.describe(); });
    require(a.src_k_cache.stride[1] == a.dst_k_cache.stride[1] &&
                a.src_k_cache.stride[2] == a.dst_k_cache.stride[2],
            fn, [&] { return "source and destination must use the same layout: " + a.src_k_cache.describe() +
                    " vs " + a.dst_k_cache.describe(); });
  }
  check_pairs(a.block_pairs, fn);
  const auto* p = a.block_pairs.as<const std::int32_t>();
  for (std::int64_t i = 0; i < a.block_pairs.shape[0]; ++i) {
    require(p[2 * i] >= 0 && p[2 * i] < s.num_blocks && p[2 * i + 1] >= 0 &&
                p[2 * i + 1] < d.num_blocks,
            fn, [&] { return "block_pairs[" + std::to_string(i) + "] = (" + std::to_string(p[2 * i]) + ", " +
                    std::to_string(p[2 * i + 1]) + ") is out of range; source has " +
                    std::to_string(s.num_blocks) + " blocks, destination " +
                    std::to_string(d.num_blocks); });
  }
  return {a.block_pairs.shape[0], s.num_kv_heads, s.block_size, s.head_dim, a.src_k_cache.dtype};
}

}  // namespace pagesim::kernels

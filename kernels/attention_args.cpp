#include "kernels/attention_args.h"

#include <cmath>
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
using detail::expect_vector;
using detail::require;

namespace {

std::string head_dims_list() {
  std::string s;
  for (std::int32_t d : limits::kHeadDims) s += (s.empty() ? "" : ", ") + std::to_string(d);
  return s;
}

// Query/out/alibi/scale checks shared by paged and dense attention. Fills the query part
// of `shape`.
void check_queries(const TensorView& query, const TensorView& out, const TensorView& alibi,
                   float scale, const char* fn, AttentionShape& shape) {
  expect_float_tensor(query, fn, "query", 3);
  expect_float_tensor(out, fn, "out", 3);
  expect_inner_contiguous(query, fn, "query");
  expect_inner_contiguous(out, fn, "out");
  for (int d = 0; d < 3; ++d) {
    require(query.shape[static_cast<std::size_t>(d)] <= INT32_MAX, fn,
            [&] { return "query dimensions must fit in int32, got " + query.describe(); });
    expect_dim(out, fn, "out", d, query.shape[static_cast<std::size_t>(d)], "same as query");
  }
  shape.num_query_tokens = static_cast<std::int32_t>(query.shape[0]);
  shape.num_q_heads = static_cast<std::int32_t>(query.shape[1]);
  shape.head_dim = static_cast<std::int32_t>(query.shape[2]);
  shape.dtype = query.dtype;
  require(shape.num_q_heads >= 1, fn, [&] { return "query must have at least one head, got " + query.describe(); });
  require(shape.head_dim >= 1, fn, [&] { return "head_dim must be >= 1, got " + query.describe(); });
  if (!alibi.empty()) expect_vector(alibi, fn, "alibi_slopes", DType::kFloat32, shape.num_q_heads);
  require(std::isfinite(scale), fn, [&] { return "scale must be finite, got " + std::to_string(scale); });
}

void check_mask(const AttentionMask& mask, const char* fn) {
  const bool windowed = !mask.causal();
  require(windowed ? mask.window >= 1 : mask.window == 0, fn, [&] {
    return std::string("mask.window is ") + std::to_string(mask.window) +
           (windowed ? ", expected >= 1 tokens for a sliding-window or chunked-local mask"
                     : ", expected 0 for the causal mask");
  });
}

void check_group(const char* fn, AttentionShape& shape) {
  require(shape.num_kv_heads >= 1 && shape.num_q_heads % shape.num_kv_heads == 0, fn,
          [&] { return "num_q_heads (" + std::to_string(shape.num_q_heads) +
              ") must be a positive multiple of num_kv_heads (" +
              std::to_string(shape.num_kv_heads) + ")"; });
}

void check_query_starts(const TensorView& query_starts, const char* fn, AttentionShape& shape) {
  shape.decode = detail::expect_query_starts(query_starts, shape.num_query_tokens, shape.num_seqs, fn);
}

}  // namespace

AttentionShape check_paged_attention_args(const PagedAttentionArgs& a, const char* fn,
                                          Backend backend) {
  AttentionShape shape;
  check_queries(a.query, a.out, a.alibi_slopes, a.scale, fn, shape);
  check_mask(a.mask, fn);

  expect_float_tensor(a.k_cache, fn, "k_cache", 4);
  expect_float_tensor(a.v_cache, fn, "v_cache", 4);
  const KvCacheGeometry g = kv_cache_geometry(a.k_cache, fn);
  kv_cache_geometry(a.v_cache, fn);
  for (int d = 0; d < 4; ++d) {
    const auto i = static_cast<std::size_t>(d);
    require(a.v_cache.shape[i] == a.k_cache.shape[i] && a.v_cache.stride[i] == a.k_cache.stride[i],
            fn, [&] { return "v_cache must have the shape and strides of k_cache: k_cache " +
                    a.k_cache.describe() + ", v_cache " + a.v_cache.describe(); });
  }
  require(a.v_cache.dtype == a.k_cache.dtype, fn,
          [&] { return "v_cache dtype must equal k_cache's: " + a.k_cache.describe() + " vs " +
              a.v_cache.describe(); });
  expect_dim(a.k_cache, fn, "k_cache", 3, shape.head_dim, "head_dim, as in query");
  shape.num_kv_heads = g.num_kv_heads;
  shape.block_size = g.block_size;
  shape.num_blocks = g.num_blocks;
  check_group(fn, shape);
  require(g.block_size >= 1, fn, [&] { return "block_size must be >= 1, got " + a.k_cache.describe(); });

  shape.num_seqs = detail::expect_block_table(a.block_table, a.kv_lens, fn);
  check_query_starts(a.query_starts, fn, shape);

  if (backend == Backend::kCuda) {
    const DType t = a.query.dtype;
    for (const TensorView* v : {&a.out, &a.k_cache, &a.v_cache}) {
      require(v->dtype == t, fn,
              [&] { return std::string("query, out, k_cache and v_cache must share one dtype; query is ") +
                  dtype_name(t) + ", got " + v->describe(); });
    }
    require(limits::is_supported_head_dim(shape.head_dim), fn,
            [&] { return "head_dim " + std::to_string(shape.head_dim) + " is not supported; expected one of " +
                head_dims_list(); });
    require(limits::is_supported_block_size(shape.block_size), fn,
            [&] { return "block_size " + std::to_string(shape.block_size) +
                " is not supported; expected a power of two in [" +
                std::to_string(limits::kMinBlockSize) + ", " +
                std::to_string(limits::kMaxBlockSize) + "]"; });
    expect_row_aligned(a.query, fn, "query");
    expect_row_aligned(a.out, fn, "out");
    expect_row_aligned(a.k_cache, fn, "k_cache");
    expect_row_aligned(a.v_cache, fn, "v_cache");
  }
  return shape;
}

AttentionShape check_dense_attention_args(const DenseAttentionArgs& a, const char* fn) {
  AttentionShape shape;
  check_queries(a.query, a.out, a.alibi_slopes, a.scale, fn, shape);
  check_mask(a.mask, fn);
  expect_float_tensor(a.keys, fn, "keys", 3);
  expect_float_tensor(a.values, fn, "values", 3);
  for (int d = 0; d < 3; ++d) {
    expect_dim(a.values, fn, "values", d, a.keys.shape[static_cast<std::size_t>(d)],
               "same as keys");
  }
  expect_dim(a.keys, fn, "keys", 2, shape.head_dim, "head_dim, as in query");
  require(a.keys.shape[1] <= INT32_MAX, fn, [&] { return "too many kv heads: " + a.keys.describe(); });
  shape.num_kv_heads = static_cast<std::int32_t>(a.keys.shape[1]);
  check_group(fn, shape);
  expect_tensor(a.kv_starts, fn, "kv_starts", 1, DType::kInt32);
  require(a.kv_starts.shape[0] >= 1 && a.kv_starts.shape[0] - 1 <= INT32_MAX, fn,
          [&] { return "kv_starts needs num_seqs + 1 >= 1 entries, got " + a.kv_starts.describe(); });
  expect_vector(a.kv_starts, fn, "kv_starts", DType::kInt32, a.kv_starts.shape[0]);
  shape.num_seqs = static_cast<std::int32_t>(a.kv_starts.shape[0] - 1);
  check_query_starts(a.query_starts, fn, shape);
  return shape;
}

}  // namespace pagesim::kernels

#include "kernels/latent_args.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/arg_check.h"
#include "kernels/kv_layout.h"
#include "kernels/limits.h"

namespace pagesim::kernels {

using detail::expect_dim;
using detail::expect_inner_contiguous;
using detail::expect_row_aligned;
using detail::require;

LatentShape check_latent_attention_args(const LatentAttentionArgs& a, const char* fn, Backend backend) {
  LatentShape shape;
  for (const auto& entry : {std::pair{&a.query, "query"}, std::pair{&a.out, "out"}}) {
    const TensorView* v = entry.first;  // not structured bindings: the lambdas below capture them
    const char* name = entry.second;
    require(v->rank == 3 && is_floating(v->dtype), fn,
            [&] { return std::string(name) + " must be a rank-3 f32, f16 or bf16 tensor, got " + v->describe(); });
    require(v->empty() || v->data != nullptr, fn, [&] { return std::string(name) + " has no data pointer"; });
    expect_inner_contiguous(*v, fn, name);
    for (int d = 0; d < 3; ++d) {
      require(v->shape[static_cast<std::size_t>(d)] <= INT32_MAX, fn,
              [&] { return std::string(name) + " dimensions must fit in int32, got " + v->describe(); });
    }
  }
  shape.num_query_tokens = static_cast<std::int32_t>(a.query.shape[0]);
  shape.num_heads = static_cast<std::int32_t>(a.query.shape[1]);
  shape.latent_dim = static_cast<std::int32_t>(a.query.shape[2]);
  shape.value_dim = static_cast<std::int32_t>(a.out.shape[2]);
  shape.dtype = a.query.dtype;
  expect_dim(a.out, fn, "out", 0, shape.num_query_tokens, "query tokens, as in query");
  expect_dim(a.out, fn, "out", 1, shape.num_heads, "heads, as in query");
  require(shape.num_heads >= 1, fn, [&] { return "query must have at least one head, got " + a.query.describe(); });
  require(shape.value_dim >= 1 && shape.value_dim <= shape.latent_dim, fn, [&] {
    return "out's last dimension is the value width, expected 1.." + std::to_string(shape.latent_dim) +
           " (the latent width of query), got " + a.out.describe();
  });
  require(std::isfinite(a.scale), fn, [&] { return "scale must be finite, got " + std::to_string(a.scale); });

  const TensorView& c = a.latent_cache;
  require(c.rank == 4 && (is_floating(c.dtype) || c.dtype == DType::kFloat8E4M3), fn, [&] {
    return "latent_cache must be a rank-4 f32, f16, bf16 or fp8 tensor [blocks, 1, block_size, latent_dim], got " +
           c.describe();
  });
  require(c.empty() || c.data != nullptr, fn, [] { return std::string("latent_cache has no data pointer"); });
  const KvCacheGeometry g = kv_cache_geometry(c, fn);
  require(g.num_kv_heads == 1, fn, [&] {
    return "latent_cache holds one head shared by every query head, got " + std::to_string(g.num_kv_heads) +
           " heads: " + c.describe();
  });
  expect_dim(c, fn, "latent_cache", 3, shape.latent_dim, "latent_dim, as in query");
  require(g.block_size >= 1, fn, [&] { return "block_size must be >= 1, got " + c.describe(); });
  shape.block_size = g.block_size;
  shape.num_blocks = g.num_blocks;
  shape.cache_dtype = c.dtype;
  const bool fp8 = c.dtype == DType::kFloat8E4M3;
  require(std::isfinite(a.cache_scale) && a.cache_scale > 0 && (fp8 || a.cache_scale == 1.0f), fn, [&] {
    return "cache_scale must be finite and > 0, and 1 unless the cache is fp8; got " +
           std::to_string(a.cache_scale) + " with a " + dtype_name(c.dtype) + " cache";
  });

  shape.num_seqs = detail::expect_block_table(a.block_table, a.kv_lens, fn);
  shape.decode = detail::expect_query_starts(a.query_starts, shape.num_query_tokens, shape.num_seqs, fn);

  if (backend == Backend::kCuda) {
    require(shape.dtype == DType::kFloat16 || shape.dtype == DType::kBFloat16, fn,
            [&] { return "query must be f16 or bf16 (the tensor cores' operands), got " + a.query.describe(); });
    require(a.out.dtype == shape.dtype, fn, [&] {
      return std::string("out must have query's dtype ") + dtype_name(shape.dtype) + ", got " + a.out.describe();
    });
    require(c.dtype == shape.dtype || fp8, fn, [&] {
      return std::string("latent_cache must be ") + dtype_name(shape.dtype) + " (query's dtype) or fp8, got " +
             c.describe();
    });
    require(shape.latent_dim == latent_limits::kLatentDim && shape.value_dim == latent_limits::kValueDim, fn, [&] {
      return "latent_dim " + std::to_string(shape.latent_dim) + " and value_dim " + std::to_string(shape.value_dim) +
             " are not supported; expected " + std::to_string(latent_limits::kLatentDim) + " and " +
             std::to_string(latent_limits::kValueDim) + " (kv_lora_rank 512 + rope 64)";
    });
    require(limits::is_supported_block_size(shape.block_size), fn, [&] {
      return "block_size " + std::to_string(shape.block_size) + " is not supported; expected a power of two in [" +
             std::to_string(limits::kMinBlockSize) + ", " + std::to_string(limits::kMaxBlockSize) + "]";
    });
    expect_row_aligned(a.query, fn, "query");
    expect_row_aligned(a.out, fn, "out");
    require(reinterpret_cast<std::uintptr_t>(c.data) % 16 == 0 && c.stride[0] * dtype_size(c.dtype) % 16 == 0 &&
                c.stride[2] * dtype_size(c.dtype) % 16 == 0,
            fn, [&] { return "latent_cache rows must start on 16 bytes, got " + c.describe(); });
  }
  return shape;
}

LatentPlan plan_latent_attention(const LatentProblem& p, std::int32_t target_ctas, std::int32_t forced_partitions) {
  const char* fn = "plan_latent_attention";
  require(p.num_seqs >= 0 && p.num_heads >= 1 && p.max_query_len >= 0 && p.max_kv_len >= 0, fn, [&] {
    return "problem sizes must be >= 0 (heads >= 1): seqs " + std::to_string(p.num_seqs) + ", heads " +
           std::to_string(p.num_heads) + ", max_query_len " + std::to_string(p.max_query_len) + ", max_kv_len " +
           std::to_string(p.max_kv_len);
  });
  LatentPlan plan;
  plan.problem = p;
  const std::int64_t rows = static_cast<std::int64_t>(p.max_query_len) * p.num_heads;
  plan.row_chunks = static_cast<std::int32_t>((rows + latent_tile::kRows - 1) / latent_tile::kRows);
  const std::int64_t base = static_cast<std::int64_t>(plan.row_chunks) * p.num_seqs;
  std::int64_t parts = 1;
  const std::int64_t most = std::max<std::int64_t>(1, p.max_kv_len / latent_tile::kKeys);
  if (forced_partitions > 0) {
    parts = std::min<std::int64_t>(forced_partitions, most);
  } else if (base > 0 && 2 * base <= target_ctas) {
    // Fewer CTAs than half the device: as many partitions as keep one wave (a grid just
    // short of full gains less from a second wave than the workspace round trip costs).
    parts = target_ctas / base;
    parts = std::min<std::int64_t>(parts, std::max<std::int64_t>(1, p.max_kv_len / latent_tile::kMinPartitionTokens));
  }
  if (parts > 1) {
    const std::int64_t per = (p.max_kv_len + parts - 1) / parts;
    plan.partition_tokens =
        static_cast<std::int32_t>((per + latent_tile::kKeys - 1) / latent_tile::kKeys * latent_tile::kKeys);
    parts = (p.max_kv_len + plan.partition_tokens - 1) / plan.partition_tokens;
  }
  if (parts <= 1) {
    parts = 1;
    plan.partition_tokens = 0;
  }
  plan.partitions = static_cast<std::int32_t>(parts);
  plan.grid = LaunchGrid{std::max<std::int64_t>(plan.row_chunks, 1), std::max<std::int64_t>(p.num_seqs, 1), parts};
  check_launch_grid(plan.grid, fn, "paged_latent_attention");
  if (parts > 1) {
    // fp32 partial outputs [seq][row][partition][value_dim], then their log-sum-exp
    // [seq][row][partition], each 256-byte aligned.
    const std::int64_t prow = static_cast<std::int64_t>(p.num_seqs) * plan.row_chunks * latent_tile::kRows * parts;
    const auto align = [](std::int64_t b) { return (b + 255) / 256 * 256; };
    plan.workspace_bytes = static_cast<std::size_t>(align(prow * latent_limits::kValueDim * 4) + align(prow * 4));
  }
  return plan;
}

}  // namespace pagesim::kernels

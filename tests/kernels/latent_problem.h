// Test support: random absorbed-MLA problems (kernels/latent_args.h) on the host — queries,
// a paged latent cache with shuffled physical blocks and NaN in every slot no sequence owns,
// block tables and lengths — and a direct O(n^2) evaluation of the definition in double,
// independent of the reference's paging and tiling.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/latent_args.h"
#include "kernels/tensor_view.h"

namespace pagesim::kernels::testing {

struct LatentSpec {
  std::vector<std::int32_t> kv_lens;
  std::vector<std::int32_t> query_lens;  // empty: decode (one query per sequence)
  std::int32_t num_heads = 16;
  std::int32_t latent_dim = latent_limits::kLatentDim;
  std::int32_t value_dim = latent_limits::kValueDim;
  std::int32_t block_size = 64;
  DType dtype = DType::kBFloat16;        // query and out
  DType cache_dtype = DType::kBFloat16;  // or kFloat8E4M3
  float cache_scale = 1.0f;              // fp8: latent = stored x cache_scale
  std::uint64_t seed = 1;
};

// A spec from its parts (the fields' defaults for the dimensions unless given).
LatentSpec latent_spec(std::vector<std::int32_t> kv_lens, std::vector<std::int32_t> query_lens, std::int32_t heads,
                       std::int32_t block_size, DType dtype, DType cache_dtype, float cache_scale = 1.0f,
                       std::uint64_t seed = 1, std::int32_t latent_dim = latent_limits::kLatentDim,
                       std::int32_t value_dim = latent_limits::kValueDim);

class LatentTestProblem {
 public:
  explicit LatentTestProblem(const LatentSpec& spec);

  const LatentSpec& spec() const { return spec_; }
  std::int32_t num_seqs() const { return static_cast<std::int32_t>(spec_.kv_lens.size()); }
  std::int32_t num_query_tokens() const { return query_starts_.back(); }
  std::int32_t num_blocks() const { return num_blocks_; }
  std::int32_t max_query_len() const;
  std::int32_t max_kv_len() const;
  bool decode() const { return spec_.query_lens.empty(); }
  std::size_t out_elements() const;

  // Host views (the output views `out`, of the problem's dtype unless given).
  LatentAttentionArgs args(const TensorView& out) const;
  // The definition evaluated directly in double over each sequence's logical tokens.
  std::vector<double> direct() const;

  const std::vector<std::byte>& query_bytes() const { return query_; }
  const std::vector<std::byte>& cache_bytes() const { return cache_; }
  const std::vector<std::int32_t>& block_table() const { return table_; }
  const std::vector<std::int32_t>& kv_lens() const { return spec_.kv_lens; }
  const std::vector<std::int32_t>& query_starts() const { return query_starts_; }
  std::int64_t table_stride() const { return table_stride_; }

 private:
  LatentSpec spec_;
  std::int32_t num_blocks_ = 0;
  std::int64_t table_stride_ = 1;
  std::vector<std::int32_t> query_starts_;
  std::vector<std::int32_t> table_;
  std::vector<std::byte> query_;
  std::vector<std::byte> cache_;
};

}  // namespace pagesim::kernels::testing

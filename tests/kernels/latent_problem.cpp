#include "latent_problem.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <utility>

#include "kernels/element_access.h"
#include "kernels/kv_layout.h"

namespace pagesim::kernels::testing {

LatentSpec latent_spec(std::vector<std::int32_t> kv_lens, std::vector<std::int32_t> query_lens, std::int32_t heads,
                       std::int32_t block_size, DType dtype, DType cache_dtype, float cache_scale, std::uint64_t seed,
                       std::int32_t latent_dim, std::int32_t value_dim) {
  LatentSpec s;
  s.kv_lens = std::move(kv_lens);
  s.query_lens = std::move(query_lens);
  s.num_heads = heads;
  s.block_size = block_size;
  s.dtype = dtype;
  s.cache_dtype = cache_dtype;
  s.cache_scale = cache_scale;
  s.seed = seed;
  s.latent_dim = latent_dim;
  s.value_dim = value_dim;
  return s;
}

LatentTestProblem::LatentTestProblem(const LatentSpec& spec) : spec_(spec) {
  const std::int32_t n = num_seqs();
  query_starts_.assign(static_cast<std::size_t>(n) + 1, 0);
  std::int64_t most_blocks = 1;
  std::int32_t total_blocks = 0;
  for (std::int32_t s = 0; s < n; ++s) {
    const std::int32_t q = decode() ? 1 : spec_.query_lens[static_cast<std::size_t>(s)];
    query_starts_[static_cast<std::size_t>(s) + 1] = query_starts_[static_cast<std::size_t>(s)] + q;
    const std::int64_t blocks = (spec_.kv_lens[static_cast<std::size_t>(s)] + spec_.block_size - 1) / spec_.block_size;
    most_blocks = std::max(most_blocks, blocks);
    total_blocks += static_cast<std::int32_t>(blocks);
  }
  // Physical blocks: every sequence's, shuffled, plus a few spare (NaN) ones.
  num_blocks_ = total_blocks + 3;
  std::vector<std::int32_t> ids(static_cast<std::size_t>(num_blocks_));
  std::iota(ids.begin(), ids.end(), 0);
  std::mt19937_64 rng(spec_.seed);
  std::shuffle(ids.begin(), ids.end(), rng);
  table_stride_ = most_blocks + 1;  // a spare column, -1
  table_.assign(static_cast<std::size_t>(n * table_stride_), -1);
  std::size_t next = 0;
  for (std::int32_t s = 0; s < n; ++s) {
    const std::int64_t blocks = (spec_.kv_lens[static_cast<std::size_t>(s)] + spec_.block_size - 1) / spec_.block_size;
    for (std::int64_t b = 0; b < blocks; ++b) table_[static_cast<std::size_t>(s * table_stride_ + b)] = ids[next++];
  }
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const std::int64_t q_elems = static_cast<std::int64_t>(num_query_tokens()) * spec_.num_heads * spec_.latent_dim;
  query_.resize(static_cast<std::size_t>(std::max<std::int64_t>(q_elems, 1)) * dtype_size(spec_.dtype));
  const TensorView qv = TensorView::contiguous(query_.data(), spec_.dtype, {std::max<std::int64_t>(q_elems, 1)});
  for (std::int64_t i = 0; i < q_elems; ++i) store_element(qv, i, u(rng));
  // The cache: NaN everywhere, then every owned slot holds latent / cache_scale with the
  // latent uniform in [-1, 1).
  const std::int64_t c_elems = static_cast<std::int64_t>(num_blocks_) * spec_.block_size * spec_.latent_dim;
  cache_.resize(static_cast<std::size_t>(c_elems) * dtype_size(spec_.cache_dtype));
  const TensorView cv = TensorView::contiguous(cache_.data(), spec_.cache_dtype, {c_elems});
  for (std::int64_t i = 0; i < c_elems; ++i) store_element(cv, i, std::numeric_limits<float>::quiet_NaN());
  for (std::int32_t s = 0; s < n; ++s) {
    for (std::int32_t t = 0; t < spec_.kv_lens[static_cast<std::size_t>(s)]; ++t) {
      const std::int32_t block = table_[static_cast<std::size_t>(s * table_stride_ + t / spec_.block_size)];
      const std::int64_t base = (static_cast<std::int64_t>(block) * spec_.block_size + t % spec_.block_size) *
                                spec_.latent_dim;
      for (std::int32_t x = 0; x < spec_.latent_dim; ++x) store_element(cv, base + x, u(rng) / spec_.cache_scale);
    }
  }
}

std::int32_t LatentTestProblem::max_query_len() const {
  std::int32_t m = 0;
  for (std::size_t s = 0; s + 1 < query_starts_.size(); ++s) m = std::max(m, query_starts_[s + 1] - query_starts_[s]);
  return m;
}

std::int32_t LatentTestProblem::max_kv_len() const {
  return spec_.kv_lens.empty() ? 0 : *std::max_element(spec_.kv_lens.begin(), spec_.kv_lens.end());
}

std::size_t LatentTestProblem::out_elements() const {
  return static_cast<std::size_t>(num_query_tokens()) * static_cast<std::size_t>(spec_.num_heads) *
         static_cast<std::size_t>(spec_.value_dim);
}

LatentAttentionArgs LatentTestProblem::args(const TensorView& out) const {
  LatentAttentionArgs a;
  a.query = TensorView::contiguous(query_.data(), spec_.dtype, {num_query_tokens(), spec_.num_heads, spec_.latent_dim});
  a.out = out;
  a.latent_cache = TensorView::contiguous(cache_.data(), spec_.cache_dtype,
                                          {num_blocks_, 1, spec_.block_size, spec_.latent_dim});
  a.block_table = TensorView::contiguous(table_.data(), DType::kInt32, {num_seqs(), table_stride_});
  a.kv_lens = TensorView::contiguous(spec_.kv_lens.data(), DType::kInt32, {num_seqs()});
  if (!decode()) a.query_starts = TensorView::contiguous(query_starts_.data(), DType::kInt32, {num_seqs() + 1});
  a.scale = 1.0f / std::sqrt(192.0f);  // DeepSeek-V3: qk_nope 128 + qk_rope 64
  a.cache_scale = spec_.cache_scale;
  return a;
}

std::vector<double> LatentTestProblem::direct() const {
  const TensorView qv = TensorView::contiguous(query_.data(), spec_.dtype, {static_cast<std::int64_t>(query_.size())});
  const TensorView cv = TensorView::contiguous(cache_.data(), spec_.cache_dtype, {static_cast<std::int64_t>(cache_.size())});
  const double scale = 1.0 / std::sqrt(192.0);
  const std::int32_t d = spec_.latent_dim;
  std::vector<double> out(out_elements(), 0.0);
  for (std::int32_t s = 0; s < num_seqs(); ++s) {
    const std::int32_t kv = spec_.kv_lens[static_cast<std::size_t>(s)];
    const std::int32_t q0 = query_starts_[static_cast<std::size_t>(s)];
    const std::int32_t ql = query_starts_[static_cast<std::size_t>(s) + 1] - q0;
    std::vector<std::vector<double>> keys(static_cast<std::size_t>(kv), std::vector<double>(static_cast<std::size_t>(d)));
    for (std::int32_t t = 0; t < kv; ++t) {
      const std::int32_t block = table_[static_cast<std::size_t>(s * table_stride_ + t / spec_.block_size)];
      const std::int64_t base = (static_cast<std::int64_t>(block) * spec_.block_size + t % spec_.block_size) * d;
      for (std::int32_t x = 0; x < d; ++x) {
        keys[static_cast<std::size_t>(t)][static_cast<std::size_t>(x)] =
            static_cast<double>(static_cast<float>(load_element(cv, base + x) * spec_.cache_scale));
      }
    }
    for (std::int32_t i = 0; i < ql; ++i) {
      const std::int32_t pos = kv - ql + i;
      for (std::int32_t h = 0; h < spec_.num_heads; ++h) {
        const std::int64_t qbase = (static_cast<std::int64_t>(q0 + i) * spec_.num_heads + h) * d;
        std::vector<double> score(static_cast<std::size_t>(pos + 1));
        double mx = -std::numeric_limits<double>::infinity();
        for (std::int32_t j = 0; j <= pos; ++j) {
          double dot = 0;
          for (std::int32_t x = 0; x < d; ++x) dot += load_element(qv, qbase + x) * keys[static_cast<std::size_t>(j)][static_cast<std::size_t>(x)];
          score[static_cast<std::size_t>(j)] = dot * scale;
          mx = std::max(mx, dot * scale);
        }
        double sum = 0;
        for (double& e : score) sum += (e = std::exp(e - mx));
        double* o = out.data() + (static_cast<std::size_t>(q0 + i) * static_cast<std::size_t>(spec_.num_heads) +
                                  static_cast<std::size_t>(h)) * static_cast<std::size_t>(spec_.value_dim);
        for (std::int32_t j = 0; j <= pos; ++j) {
          for (std::int32_t x = 0; x < spec_.value_dim; ++x) {
            o[x] += score[static_cast<std::size_t>(j)] / sum * keys[static_cast<std::size_t>(j)][static_cast<std::size_t>(x)];
          }
        }
      }
    }
  }
  return out;
}

}  // namespace pagesim::kernels::testing

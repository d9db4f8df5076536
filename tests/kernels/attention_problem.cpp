#include "attention_problem.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>

#include "kernels/element_access.h"
#include "kernels/half.h"

namespace pagesim::kernels::testing {

namespace {

std::size_t bytes_of(DType t, std::int64_t n) { return dtype_size(t) * static_cast<std::size_t>(n); }

}  // namespace

std::vector<float> alibi_slopes(std::int32_t n) {
  // Press et al.: for n a power of two, slope_i = 2^(-8 (i + 1) / n); otherwise the slopes of
  // the closest smaller power of two followed by every other slope of twice that.
  auto pow2_slopes = [](std::int32_t m) {
    std::vector<float> s(static_cast<std::size_t>(m));
    for (std::int32_t i = 0; i < m; ++i) {
      s[static_cast<std::size_t>(i)] = std::exp2(-8.0f * static_cast<float>(i + 1) / static_cast<float>(m));
    }
    return s;
  };
  std::int32_t p = 1;
  while (p * 2 <= n) p *= 2;
  std::vector<float> slopes = pow2_slopes(p);
  if (p < n) {
    const std::vector<float> extra = pow2_slopes(2 * p);
    for (std::int32_t i = 0; static_cast<std::int32_t>(slopes.size()) < n; i += 2) {
      slopes.push_back(extra[static_cast<std::size_t>(i)]);
    }
  }
  return slopes;
}

void fill_uniform(void* data, DType dtype, std::int64_t n, float magnitude, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-magnitude, magnitude);
  const TensorView v = TensorView::contiguous(data, dtype, {n});
  for (std::int64_t i = 0; i < n; ++i) store_element(v, i, dist(rng));
}

void fill_nan(void* data, DType dtype, std::int64_t n) {
  const TensorView v = TensorView::contiguous(data, dtype, {n});
  for (std::int64_t i = 0; i < n; ++i) store_element(v, i, std::numeric_limits<double>::quiet_NaN());
}

AttentionProblem::AttentionProblem(const ProblemSpec& spec) : spec_(spec) {
  const auto num_seqs = static_cast<std::int32_t>(spec.kv_lens.size());
  if (!spec.query_lens.empty() && spec.query_lens.size() != spec.kv_lens.size()) {
    throw std::invalid_argument("ProblemSpec: query_lens must be empty or match kv_lens");
  }
  const std::int32_t bs = spec.block_size;
  const std::int32_t hkv = spec.num_kv_heads;
  const std::int32_t d = spec.head_dim;
  const std::int64_t row = static_cast<std::int64_t>(hkv) * d;  // elements per token (all heads)

  // Physical blocks: sequence 0's, then each other sequence's unshared ones, then spares.
  std::vector<std::int64_t> shared(static_cast<std::size_t>(num_seqs), 0);
  std::int64_t total_blocks = spec.spare_blocks;
  for (std::int32_t s = 0; s < num_seqs; ++s) {
    const std::int64_t len = spec.kv_lens[static_cast<std::size_t>(s)];
    if (s > 0) {
      shared[static_cast<std::size_t>(s)] =
          std::min<std::int64_t>({spec.shared_prefix_blocks, spec.kv_lens[0] / bs, len / bs});
    }
    total_blocks += (len + bs - 1) / bs - shared[static_cast<std::size_t>(s)];
  }
  num_blocks_ = static_cast<std::int32_t>(std::max<std::int64_t>(total_blocks, 1));
  std::vector<std::int32_t> perm(static_cast<std::size_t>(num_blocks_));
  std::iota(perm.begin(), perm.end(), 0);
  std::mt19937_64 rng(spec.seed * 7919 + 17);
  std::shuffle(perm.begin(), perm.end(), rng);

  std::vector<BatchSequence> seqs(static_cast<std::size_t>(num_seqs));
  std::size_t next = 0;
  for (std::int32_t s = 0; s < num_seqs; ++s) {
    BatchSequence& q = seqs[static_cast<std::size_t>(s)];
    q.kv_len = spec.kv_lens[static_cast<std::size_t>(s)];
    q.query_len = decode() ? std::min(1, q.kv_len) : spec.query_lens[static_cast<std::size_t>(s)];
    const std::int64_t blocks = (static_cast<std::int64_t>(q.kv_len) + bs - 1) / bs;
    for (std::int64_t b = 0; b < blocks; ++b) {
      q.block_ids.push_back(b < shared[static_cast<std::size_t>(s)]
                                ? seqs[0].block_ids[static_cast<std::size_t>(b)]
                                : perm[next++]);
    }
  }
  batch_ = pack_batch(seqs, bs, num_blocks_);

  // Logical K/V, contiguous per sequence; shared prefixes copy sequence 0's tokens.
  kv_starts_.assign(static_cast<std::size_t>(num_seqs) + 1, 0);
  for (std::int32_t s = 0; s < num_seqs; ++s) {
    kv_starts_[static_cast<std::size_t>(s) + 1] = kv_starts_[static_cast<std::size_t>(s)] + spec.kv_lens[static_cast<std::size_t>(s)];
  }
  const std::int64_t total_kv = kv_starts_.back();
  const std::size_t tok_bytes = bytes_of(spec.dtype, row);
  keys_.resize(std::max<std::size_t>(bytes_of(spec.dtype, total_kv * row), 16));
  values_.resize(keys_.size());
  fill_uniform(keys_.data(), spec.dtype, total_kv * row, 1.0f, spec.seed * 3 + 1);
  fill_uniform(values_.data(), spec.dtype, total_kv * row, 1.0f, spec.seed * 3 + 2);
  for (std::int32_t s = 1; s < num_seqs; ++s) {
    const std::size_t n = static_cast<std::size_t>(shared[static_cast<std::size_t>(s)] * bs) * tok_bytes;
    const std::size_t dst = static_cast<std::size_t>(kv_starts_[static_cast<std::size_t>(s)]) * tok_bytes;
    std::memcpy(keys_.data() + dst, keys_.data(), n);
    std::memcpy(values_.data() + dst, values_.data(), n);
  }

  // Paged cache: NaN everywhere, then every owned slot.
  const std::int64_t cache_elems = kv_cache_elements(num_blocks_, hkv, bs, d);
  k_cache_.resize(bytes_of(spec.dtype, cache_elems));
  v_cache_.resize(k_cache_.size());
  fill_nan(k_cache_.data(), spec.dtype, cache_elems);
  fill_nan(v_cache_.data(), spec.dtype, cache_elems);
  const KvCacheGeometry g = kv_cache_geometry(k_cache_view(), "AttentionProblem");
  const std::size_t head_bytes = bytes_of(spec.dtype, d);
  for (std::int32_t s = 0; s < num_seqs; ++s) {
    for (std::int32_t t = 0; t < spec.kv_lens[static_cast<std::size_t>(s)]; ++t) {
      const std::int32_t block = batch_.block_table[static_cast<std::size_t>(s * batch_.max_blocks_per_seq + t / bs)];
      slots_.push_back(slot_id(block, t % bs, bs));
      const std::size_t src = static_cast<std::size_t>(kv_starts_[static_cast<std::size_t>(s)] + t) * tok_bytes;
      for (std::int32_t h = 0; h < hkv; ++h) {
        const std::size_t dst = bytes_of(spec.dtype, g.offset(block, h, t % bs));
        std::memcpy(k_cache_.data() + dst, keys_.data() + src + static_cast<std::size_t>(h) * head_bytes, head_bytes);
        std::memcpy(v_cache_.data() + dst, values_.data() + src + static_cast<std::size_t>(h) * head_bytes, head_bytes);
      }
    }
  }

  const std::int64_t nq = decode() ? num_seqs : batch_.num_query_tokens;
  batch_.num_query_tokens = nq;
  query_.resize(std::max<std::size_t>(bytes_of(spec.dtype, nq * spec.num_q_heads * d), 16));
  fill_uniform(query_.data(), spec.dtype, nq * spec.num_q_heads * d, spec.query_magnitude, spec.seed * 3 + 3);
  if (spec.alibi) alibi_ = testing::alibi_slopes(spec.num_q_heads);
}

float AttentionProblem::scale() const {
  return spec_.scale != 0 ? spec_.scale : 1.0f / std::sqrt(static_cast<float>(spec_.head_dim));
}

TensorView AttentionProblem::query_view() const {
  return TensorView::contiguous(query_.data(), spec_.dtype,
                                {batch_.num_query_tokens, spec_.num_q_heads, spec_.head_dim});
}
TensorView AttentionProblem::k_cache_view() const {
  return kv_cache_view(const_cast<std::byte*>(k_cache_.data()), spec_.dtype, spec_.layout, num_blocks_,
                       spec_.num_kv_heads, spec_.block_size, spec_.head_dim);
}
TensorView AttentionProblem::v_cache_view() const {
  return kv_cache_view(const_cast<std::byte*>(v_cache_.data()), spec_.dtype, spec_.layout, num_blocks_,
                       spec_.num_kv_heads, spec_.block_size, spec_.head_dim);
}
TensorView AttentionProblem::alibi_view() const {
  if (alibi_.empty()) return {};
  return TensorView::contiguous(alibi_.data(), DType::kFloat32, {static_cast<std::int64_t>(alibi_.size())});
}
TensorView AttentionProblem::keys_view() const {
  return TensorView::contiguous(keys_.data(), spec_.dtype,
                                {static_cast<std::int64_t>(kv_starts_.back()), spec_.num_kv_heads, spec_.head_dim});
}
TensorView AttentionProblem::values_view() const {
  return TensorView::contiguous(values_.data(), spec_.dtype,
                                {static_cast<std::int64_t>(kv_starts_.back()), spec_.num_kv_heads, spec_.head_dim});
}
TensorView AttentionProblem::kv_starts_view() const {
  return TensorView::contiguous(kv_starts_.data(), DType::kInt32, {static_cast<std::int64_t>(kv_starts_.size())});
}

PagedAttentionArgs AttentionProblem::paged_args(const TensorView& out) const {
  PagedAttentionArgs a;
  a.query = query_view();
  a.out = out;
  a.k_cache = k_cache_view();
  a.v_cache = v_cache_view();
  a.block_table = batch_.block_table_view();
  a.kv_lens = batch_.kv_lens_view();
  if (!decode()) a.query_starts = batch_.query_starts_view();
  a.alibi_slopes = alibi_view();
  a.scale = scale();
  a.mask = spec_.mask;
  return a;
}

DenseAttentionArgs AttentionProblem::dense_args(const TensorView& out) const {
  DenseAttentionArgs a;
  a.query = query_view();
  a.out = out;
  a.keys = keys_view();
  a.values = values_view();
  a.kv_starts = kv_starts_view();
  if (!decode()) a.query_starts = batch_.query_starts_view();
  a.alibi_slopes = alibi_view();
  a.scale = scale();
  a.mask = spec_.mask;
  return a;
}

namespace {

// Calls f(out element, ref element) for every index of out's shape (ref: same shape).
template <class F>
void for_each_pair(const TensorView& out, const TensorView& ref, F f) {
  if (out.rank != ref.rank) throw std::invalid_argument("compare: ranks differ");
  const std::int64_t n = out.numel();
  for (std::int64_t flat = 0; flat < n; ++flat) {
    std::int64_t rest = flat, oo = 0, ro = 0;
    for (int dim = out.rank - 1; dim >= 0; --dim) {
      const auto i = static_cast<std::size_t>(dim);
      const std::int64_t k = rest % out.shape[i];
      rest /= out.shape[i];
      oo += k * out.stride[i];
      ro += k * ref.stride[i];
    }
    f(flat, load_element(out, oo), load_element(ref, ro));
  }
}

}  // namespace

Comparison compare(const TensorView& out, const TensorView& ref) {
  Comparison c;
  double err2 = 0, ref2 = 0;
  for_each_pair(out, ref, [&](std::int64_t flat, double o, double r) {
    if (!std::isfinite(o)) {
      ++c.nonfinite;
      if (c.worst_index < 0) c.worst_index = flat;
      return;
    }
    const double e = std::abs(o - r);
    if (e > c.max_abs_error) {
      c.max_abs_error = e;
      if (c.nonfinite == 0) c.worst_index = flat;
    }
    c.max_ref = std::max(c.max_ref, std::abs(r));
    err2 += e * e;
    ref2 += r * r;
  });
  c.rel_l2_error = ref2 > 0 ? std::sqrt(err2 / ref2) : (err2 > 0 ? INFINITY : 0.0);
  return c;
}

Tolerance tolerance_for(DType dtype) {
  switch (dtype) {
    case DType::kFloat16: return {2e-3, 5e-3, 2e-3};
    case DType::kBFloat16: return {1.6e-2, 2e-2, 1e-2};
    default: return {2e-5, 1e-4, 1e-4};
  }
}

bool within(const TensorView& out, const TensorView& ref, const Tolerance& tol, Comparison* details) {
  const Comparison c = compare(out, ref);
  if (details != nullptr) *details = c;
  if (c.nonfinite > 0 || c.rel_l2_error > tol.rel_l2) return false;
  bool ok = true;
  for_each_pair(out, ref, [&](std::int64_t, double o, double r) {
    ok = ok && std::abs(o - r) <= tol.atol + tol.rtol * std::abs(r);
  });
  return ok;
}

}  // namespace pagesim::kernels::testing

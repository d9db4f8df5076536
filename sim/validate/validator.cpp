#include "sim/validate/validator.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "kernels/attention_args.h"
#include "kernels/half.h"
#include "kernels/kernel_error.h"
#include "kernels/kv_layout.h"
#include "kernels/reference_attention.h"
#include "kernels/tensor_view.h"
#include "sim/validate/validator_content.h"

namespace pagesim::sim {

namespace {

using kernels::DType;
using kernels::TensorView;

// A problem of one batch (not of the settings): reported in BatchCheck::error.
class BatchProblem : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Dense host storage of `count` elements of a floating dtype.
class HostTensor {
 public:
  HostTensor(DType dtype, std::int64_t count)
      : dtype_(dtype),
        bytes_(static_cast<std::size_t>(std::max<std::int64_t>(count, 1)) * kernels::dtype_size(dtype)) {}

  void* data() { return bytes_.data(); }
  DType dtype() const { return dtype_; }

  void store(std::int64_t i, float x) {
    switch (dtype_) {
      case DType::kFloat16: reinterpret_cast<kernels::Half*>(bytes_.data())[i] = kernels::Half(x); break;
      case DType::kBFloat16: reinterpret_cast<kernels::BFloat16*>(bytes_.data())[i] = kernels::BFloat16(x); break;
      default: reinterpret_cast<float*>(bytes_.data())[i] = x; break;
    }
  }
  double load(std::int64_t i) const {
    switch (dtype_) {
      case DType::kFloat16: return static_cast<float>(reinterpret_cast<const kernels::Half*>(bytes_.data())[i]);
      case DType::kBFloat16:
        return static_cast<float>(reinterpret_cast<const kernels::BFloat16*>(bytes_.data())[i]);
      default: return reinterpret_cast<const float*>(bytes_.data())[i];
    }
  }
  // Every element (and the spare one of an empty tensor) becomes a quiet NaN.
  void fill_nan() {
    const std::int64_t n = static_cast<std::int64_t>(bytes_.size() / kernels::dtype_size(dtype_));
    for (std::int64_t i = 0; i < n; ++i) store(i, std::numeric_limits<float>::quiet_NaN());
  }

 private:
  DType dtype_;
  std::vector<std::byte> bytes_;
};

std::int32_t to_i32(std::int64_t v, const std::string& what) {
  if (v < 0 || v > std::numeric_limits<std::int32_t>::max()) {
    throw BatchProblem(fmt::format("{} = {} does not fit the kernels' int32 lengths", what, v));
  }
  return static_cast<std::int32_t>(v);
}

std::string sequence_label(const SampledSequence& s, std::size_t index) {
  return fmt::format("sequence {} (request {}, seq {})", index, s.request, s.seq);
}

}  // namespace

DType parse_kv_dtype(std::string_view name, std::string_view what) {
  if (name == "f32") return DType::kFloat32;
  if (name == "f16") return DType::kFloat16;
  if (name == "bf16") return DType::kBFloat16;
  throw ValidateError(fmt::format("{}: unknown dtype '{}', expected f32, f16 or bf16", what, name));
}

Tolerance default_tolerance(ValidateDevice device, DType dtype) {
  if (device == ValidateDevice::kCpu) return {1e-6, 0};
  switch (dtype) {
    case DType::kFloat16: return {2e-3, 5e-3};
    case DType::kBFloat16: return {1.6e-2, 2e-2};
    default: return {2e-5, 1e-4};
  }
}

double BatchCheck::relative_error() const {
  if (nonfinite > 0) return std::numeric_limits<double>::infinity();
  if (max_abs_error == 0) return 0;
  return max_abs_ref > 0 ? max_abs_error / max_abs_ref : std::numeric_limits<double>::infinity();
}

Validator::Validator(const ValidatorSettings& settings, const BatchFileHeader& header,
                     const PagedAttentionBackends& backends)
    : settings_(settings), header_(header) {
  const ValidatorSettings& s = settings_;
  if (s.num_q_heads < 1 || s.num_kv_heads < 1 || s.num_q_heads % s.num_kv_heads != 0) {
    throw ValidateError(fmt::format("num_q_heads ({}) must be a positive multiple of num_kv_heads ({})",
                                    s.num_q_heads, s.num_kv_heads));
  }
  if (s.head_dim < 1) throw ValidateError(fmt::format("head_dim must be >= 1, got {}", s.head_dim));
  if (!kernels::is_floating(s.dtype)) {
    throw ValidateError(fmt::format("dtype must be f32, f16 or bf16, got {}", kernels::dtype_name(s.dtype)));
  }
  if (header_.block_size < 1) {
    throw ValidateError(fmt::format("block size {} (file header) must be >= 1", header_.block_size));
  }
  tolerance_ = default_tolerance(s.device, s.dtype);
  if (s.atol) tolerance_.atol = *s.atol;
  if (s.rtol) tolerance_.rtol = *s.rtol;
  if (!(tolerance_.atol >= 0) || !(tolerance_.rtol >= 0) || !std::isfinite(tolerance_.atol) ||
      !std::isfinite(tolerance_.rtol)) {
    throw ValidateError(fmt::format("tolerances must be finite and >= 0, got atol {} and rtol {}", tolerance_.atol,
                                    tolerance_.rtol));
  }
  backend_ = &backends.get(s.device);
  backend_->check_supported(header_.block_size, s.head_dim);
}

BatchCheck Validator::check(const SampledBatch& batch, std::int64_t index) const {
  BatchCheck c;
  c.index = index;
  c.iteration = batch.iteration;
  c.sequences = static_cast<std::int64_t>(batch.sequences.size());
  c.decode = !batch.sequences.empty();
  for (const SampledSequence& s : batch.sequences) {
    c.kv_tokens += s.kv_len;
    c.query_tokens += s.query_len;
    c.decode = c.decode && s.query_len == 1;
  }
  try {
    run(batch, c);
    c.passed = c.violations == 0;
  } catch (const BatchProblem& e) {
    c.error = e.what();
  } catch (const kernels::KernelError& e) {
    c.error = e.what();
  }
  return c;
}

void Validator::run(const SampledBatch& batch, BatchCheck& c) const {
  const ValidatorSettings& st = settings_;
  const std::int32_t block_size = header_.block_size;
  const std::vector<SampledSequence>& seqs = batch.sequences;
  const std::int32_t num_seqs = to_i32(static_cast<std::int64_t>(seqs.size()), "sequences in the batch");

  // The kernels' batch, and the physical blocks it reads (only the first ceil(kv_len / B)
  // entries of a block table are read).
  std::vector<kernels::BatchSequence> kseqs(seqs.size());
  std::int32_t max_block = -1;
  for (std::size_t i = 0; i < seqs.size(); ++i) {
    const SampledSequence& s = seqs[i];
    const std::string who = sequence_label(s, i);
    kseqs[i].kv_len = to_i32(s.kv_len, who + " kv_len");
    kseqs[i].query_len = to_i32(s.query_len, who + " query_len");
    kseqs[i].block_ids = s.block_table;
    const std::int64_t needed = (s.kv_len + block_size - 1) / block_size;
    if (static_cast<std::int64_t>(s.block_table.size()) < needed) {
      throw BatchProblem(fmt::format("{}: {} block table entries cannot hold kv_len {} (block size {})", who,
                                     s.block_table.size(), s.kv_len, block_size));
    }
    for (std::int64_t b = 0; b < needed; ++b) {
      const std::int32_t id = s.block_table[static_cast<std::size_t>(b)];
      if (id < 0 || id >= header_.num_blocks) {
        throw BatchProblem(fmt::format("{}: block_table[{}] = {} is outside [0, {}) (num_blocks of the file header)",
                                       who, b, id, header_.num_blocks));
      }
      max_block = std::max(max_block, id);
    }
  }
  const kernels::PackedBatch packed = kernels::pack_batch(kseqs, block_size);
  to_i32(packed.total_kv_tokens, "total kv tokens of the batch");
  if (packed.num_query_tokens == 0) return;  // nothing attends: nothing to compare

  const std::int32_t qh = st.num_q_heads;
  const std::int32_t kvh = st.num_kv_heads;
  const std::int32_t d = st.head_dim;
  const DType dtype = st.dtype;
  const std::int32_t num_blocks = max_block + 1;  // >= 1: some sequence attends, so kv_len >= 1

  // The paged cache, NaN everywhere, and the dense K/V of every sequence in kv_starts order.
  const std::int64_t cache_elems = kernels::kv_cache_elements(num_blocks, kvh, block_size, d);
  HostTensor k_cache(dtype, cache_elems);
  HostTensor v_cache(dtype, cache_elems);
  k_cache.fill_nan();
  v_cache.fill_nan();
  const TensorView k_view =
      kernels::kv_cache_view(k_cache.data(), dtype, kernels::KvLayout::kHND, num_blocks, kvh, block_size, d);
  const TensorView v_view =
      kernels::kv_cache_view(v_cache.data(), dtype, kernels::KvLayout::kHND, num_blocks, kvh, block_size, d);
  const kernels::KvCacheGeometry geo = kernels::kv_cache_geometry(k_view, "validator k_cache");

  const std::int64_t total_kv = packed.total_kv_tokens;
  HostTensor keys(dtype, total_kv * kvh * d);
  HostTensor values(dtype, total_kv * kvh * d);
  std::vector<std::int32_t> kv_starts(seqs.size() + 1, 0);
  for (std::size_t i = 0; i < seqs.size(); ++i) {
    kv_starts[i + 1] = kv_starts[i] + static_cast<std::int32_t>(seqs[i].kv_len);
  }

  // Filling, in batch order: a later sequence's write to a slot replaces an earlier one's.
  for (std::size_t i = 0; i < seqs.size(); ++i) {
    const SampledSequence& s = seqs[i];
    for (const TokenRun& run : s.tokens) {
      const std::uint64_t origin = hash_origin(run.origin);
      for (std::int64_t t = run.start; t < run.start + run.length && t < s.kv_len; ++t) {
        const std::int64_t identity_offset = run.offset + (t - run.start);
        const std::uint64_t k_seed = kv_token_seed(st.seed, KvPart::kKey, origin, identity_offset);
        const std::uint64_t v_seed = kv_token_seed(st.seed, KvPart::kValue, origin, identity_offset);
        const std::int32_t block = s.block_table[static_cast<std::size_t>(t / block_size)];
        const std::int64_t slot = t % block_size;
        for (std::int32_t h = 0; h < kvh; ++h) {
          const std::int64_t cache_row = geo.offset(block, h, slot);
          const std::int64_t dense_row = ((kv_starts[i] + t) * kvh + h) * d;
          for (std::int32_t x = 0; x < d; ++x) {
            const float kx = content_value(k_seed, h, x);
            const float vx = content_value(v_seed, h, x);
            keys.store(dense_row + x, kx);
            values.store(dense_row + x, vx);
            k_cache.store(cache_row + x, kx);
            v_cache.store(cache_row + x, vx);
          }
        }
      }
    }
  }

  // Queries: the last query_len positions of each sequence.
  const std::int64_t nq = packed.num_query_tokens;
  HostTensor query(dtype, nq * qh * d);
  for (std::size_t i = 0; i < seqs.size(); ++i) {
    const SampledSequence& s = seqs[i];
    for (std::int64_t j = 0; j < s.query_len; ++j) {
      const std::int64_t position = s.kv_len - s.query_len + j;
      const std::uint64_t q_seed = query_token_seed(st.seed, s.request, s.seq, position);
      const std::int64_t row = packed.query_starts[i] + j;
      for (std::int32_t h = 0; h < qh; ++h) {
        for (std::int32_t x = 0; x < d; ++x) query.store((row * qh + h) * d + x, content_value(q_seed, h, x));
      }
    }
  }

  // The paged computation, on the backend (in the dtype it writes) ...
  const bool decode = c.decode;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  HostTensor out(backend_->output_dtype(dtype), nq * qh * d);
  out.fill_nan();
  kernels::PagedAttentionArgs a;
  a.query = TensorView::contiguous(query.data(), dtype, {nq, qh, d});
  a.out = TensorView::contiguous(out.data(), out.dtype(), {nq, qh, d});
  a.k_cache = k_view;
  a.v_cache = v_view;
  a.block_table = packed.block_table_view();
  a.kv_lens = packed.kv_lens_view();
  if (!decode) a.query_starts = packed.query_starts_view();
  a.scale = scale;
  backend_->run(a, packed.max_query_len);

  // ... and the ground truth: dense attention over the logical token lists.
  HostTensor ref(DType::kFloat32, nq * qh * d);
  kernels::DenseAttentionArgs da;
  da.query = a.query;
  da.out = TensorView::contiguous(ref.data(), DType::kFloat32, {nq, qh, d});
  da.keys = TensorView::contiguous(keys.data(), dtype, {total_kv, kvh, d});
  da.values = TensorView::contiguous(values.data(), dtype, {total_kv, kvh, d});
  da.kv_starts = TensorView::contiguous(kv_starts.data(), DType::kInt32, {num_seqs + 1});
  da.query_starts = a.query_starts;
  da.scale = scale;
  kernels::reference_dense_attention(da);

  // Comparison, element by element.
  double worst = -1;
  for (std::size_t i = 0; i < seqs.size(); ++i) {
    const SampledSequence& s = seqs[i];
    for (std::int64_t j = 0; j < s.query_len; ++j) {
      const std::int64_t row = packed.query_starts[i] + j;
      for (std::int32_t h = 0; h < qh; ++h) {
        for (std::int32_t x = 0; x < d; ++x) {
          const std::int64_t e = (row * qh + h) * d + x;
          const double o = out.load(e);
          const double r = ref.load(e);
          const double err = std::abs(o - r);
          c.max_abs_ref = std::max(c.max_abs_ref, std::abs(r));
          const bool finite = std::isfinite(o);
          if (!finite) ++c.nonfinite;
          if (!finite || !(err <= tolerance_.atol + tolerance_.rtol * std::abs(r))) ++c.violations;
          // The worst element: the first non-finite one, else the largest error.
          const double rank = finite ? err : std::numeric_limits<double>::infinity();
          if (finite) c.max_abs_error = std::max(c.max_abs_error, err);
          if (rank > worst) {
            worst = rank;
            c.worst_sequence = static_cast<std::int64_t>(i);
            c.worst_request = s.request;
            c.worst_seq = s.seq;
            c.worst_position = s.kv_len - s.query_len + j;
            c.worst_q_head = h;
          }
        }
      }
    }
  }
}

}  // namespace pagesim::sim

#include "sim/validate/validator.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "kernels/attention_args.h"
#include "kernels/fp8.h"
#include "kernels/half.h"
#include "kernels/latent_args.h"
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
  const void* data() const { return bytes_.data(); }
  DType dtype() const { return dtype_; }

  void store(std::int64_t i, float x) {
    switch (dtype_) {
      case DType::kFloat16: reinterpret_cast<kernels::Half*>(bytes_.data())[i] = kernels::Half(x); break;
      case DType::kBFloat16: reinterpret_cast<kernels::BFloat16*>(bytes_.data())[i] = kernels::BFloat16(x); break;
      case DType::kFloat8E4M3: reinterpret_cast<kernels::Fp8E4M3*>(bytes_.data())[i] = kernels::Fp8E4M3(x); break;
      default: reinterpret_cast<float*>(bytes_.data())[i] = x; break;
    }
  }
  double load(std::int64_t i) const {
    switch (dtype_) {
      case DType::kFloat16: return static_cast<float>(reinterpret_cast<const kernels::Half*>(bytes_.data())[i]);
      case DType::kBFloat16:
        return static_cast<float>(reinterpret_cast<const kernels::BFloat16*>(bytes_.data())[i]);
      case DType::kFloat8E4M3:
        return static_cast<float>(reinterpret_cast<const kernels::Fp8E4M3*>(bytes_.data())[i]);
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
  if (name == "fp8") return DType::kFloat8E4M3;
  throw ValidateError(fmt::format("{}: unknown dtype '{}', expected f32, f16, bf16 or fp8 (a latent cache)", what, name));
}

Tolerance default_tolerance(ValidateDevice device, DType dtype) {
  if (device == ValidateDevice::kCpu) return {1e-6, 0};
  switch (dtype) {
    case DType::kFloat16: return {2e-3, 5e-3};
    case DType::kBFloat16:
    case DType::kFloat8E4M3: return {1.6e-2, 2e-2};  // fp8: bf16 queries; the cache's values are exact
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
  const bool fp8 = s.dtype == DType::kFloat8E4M3;
  if (!kernels::is_floating(s.dtype) && !fp8) {
    throw ValidateError(fmt::format("dtype must be f32, f16, bf16 or fp8, got {}", kernels::dtype_name(s.dtype)));
  }
  if (fp8 && !header_.latent()) {
    throw ValidateError("dtype fp8 is a latent (MLA) cache's, with bf16 queries; this file's pool has standard "
                        "attention: use f32, f16 or bf16");
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
  if (header_.latent()) {
    backend_->check_supported_latent(header_.block_size, header_.latent_dim, header_.value_dim, query_dtype(),
                                     s.dtype);
  } else {
    backend_->check_supported(header_.block_size, s.head_dim);
  }
}

DType Validator::query_dtype() const {
  return settings_.dtype == DType::kFloat8E4M3 ? DType::kBFloat16 : settings_.dtype;
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

// ---- the phases of one batch, in the order Validator::run calls them ----------------------

namespace {

// One batch in the kernels' form, and what the phases after it need to size their buffers.
struct BatchLayout {
  kernels::PackedBatch packed;          // block tables, kv_lens, query_starts
  std::int32_t num_blocks = 0;          // physical blocks the batch reads: largest id + 1
  std::vector<std::int32_t> kv_starts;  // [sequences + 1]: first dense K/V row of each sequence
  std::vector<std::int64_t> first_block;  // per sequence: first attended logical block (0 causal)
};

// A batch's K and V twice: in the paged cache, NaN in every slot no sequence wrote, and
// dense in kv_starts order (the ground truth's input, never read back from the cache).
struct KvContent {
  HostTensor k_cache;  // [num_blocks, kv_heads, block_size, head_dim], kernels::KvLayout::kHND
  HostTensor v_cache;
  HostTensor keys;     // [total kv tokens, kv_heads, head_dim]
  HostTensor values;
};

// The kHND view of one of a batch's caches (k_cache or v_cache).
TensorView cache_view(HostTensor& cache, const BatchLayout& layout, std::int32_t block_size,
                      const ValidatorSettings& st) {
  return kernels::kv_cache_view(cache.data(), cache.dtype(), kernels::KvLayout::kHND, layout.num_blocks,
                                st.num_kv_heads, block_size, st.head_dim);
}

// Checks the batch against the file header and the kernels' int32 lengths (BatchProblem
// naming the sequence otherwise) and packs it. Only the first ceil(kv_len / B) entries of a
// block table are read, so only those must name blocks of the pool; with a windowed mask only
// the attended ones (from first_block on): every key some query attends must have a block.
BatchLayout layout_batch(const std::vector<SampledSequence>& seqs, const BatchFileHeader& header) {
  const std::int32_t block_size = header.block_size;
  to_i32(static_cast<std::int64_t>(seqs.size()), "sequences in the batch");
  std::vector<kernels::BatchSequence> kseqs(seqs.size());
  std::vector<std::int64_t> first_block(seqs.size(), 0);
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
    const std::int64_t first =
        header.mask.causal() ? 0 : kernels::attended_blocks(header.mask, s.kv_len, s.query_len, block_size).first;
    first_block[i] = first;
    for (std::int64_t b = first; b < needed; ++b) {
      const std::int32_t id = s.block_table[static_cast<std::size_t>(b)];
      if (id < 0 || id >= header.num_blocks) {
        throw BatchProblem(fmt::format("{}: block_table[{}] = {} is outside [0, {}) (num_blocks of the file header){}",
                                       who, b, id, header.num_blocks,
                                       first > 0 ? fmt::format(", yet the window attends blocks {}..{}", first, needed - 1)
                                                 : std::string()));
      }
      max_block = std::max(max_block, id);
    }
  }
  // Entries before the attended blocks (freed by a windowed allocator, or stale) point at one
  // extra block that nothing writes: all NaN, so a kernel that reads one fails the check.
  const std::int32_t poison_block = max_block + 1;
  bool poisoned = false;
  for (std::size_t i = 0; i < seqs.size(); ++i)
    for (std::int64_t b = 0; b < first_block[i]; ++b) {
      kseqs[i].block_ids[static_cast<std::size_t>(b)] = poison_block;
      poisoned = true;
    }
  BatchLayout layout;
  layout.first_block = std::move(first_block);
  layout.packed = kernels::pack_batch(kseqs, block_size);
  to_i32(layout.packed.total_kv_tokens, "total kv tokens of the batch");
  layout.num_blocks = poisoned ? poison_block + 1 : max_block + 1;
  layout.kv_starts.assign(seqs.size() + 1, 0);
  for (std::size_t i = 0; i < seqs.size(); ++i) {
    layout.kv_starts[i + 1] = layout.kv_starts[i] + static_cast<std::int32_t>(seqs[i].kv_len);
  }
  return layout;
}

// Writes the K/V of every logical token's identity (validator_content.h) into its slot of
// the paged cache and its dense row, in batch order: a later sequence's write to a slot
// replaces an earlier one's. REQUIRES: layout.num_blocks >= 1.
KvContent fill_kv(const std::vector<SampledSequence>& seqs, const BatchLayout& layout, std::int32_t block_size,
                  const ValidatorSettings& st) {
  const std::int32_t kvh = st.num_kv_heads;
  const std::int32_t d = st.head_dim;
  const std::int64_t cache_elems = kernels::kv_cache_elements(layout.num_blocks, kvh, block_size, d);
  const std::int64_t dense_elems = layout.packed.total_kv_tokens * kvh * d;
  KvContent kv{HostTensor(st.dtype, cache_elems), HostTensor(st.dtype, cache_elems), HostTensor(st.dtype, dense_elems),
               HostTensor(st.dtype, dense_elems)};
  kv.k_cache.fill_nan();
  kv.v_cache.fill_nan();
  const kernels::KvCacheGeometry geo =
      kernels::kv_cache_geometry(cache_view(kv.k_cache, layout, block_size, st), "validator k_cache");
  for (std::size_t i = 0; i < seqs.size(); ++i) {
    const SampledSequence& s = seqs[i];
    for (const TokenRun& run : s.tokens) {
      const std::uint64_t origin = hash_origin(run.origin);
      for (std::int64_t t = run.start; t < run.start + run.length && t < s.kv_len; ++t) {
        const std::int64_t identity_offset = run.offset + (t - run.start);
        const std::uint64_t k_seed = kv_token_seed(st.seed, KvPart::kKey, origin, identity_offset);
        const std::uint64_t v_seed = kv_token_seed(st.seed, KvPart::kValue, origin, identity_offset);
        // A token before the attended blocks has no slot (its block may be freed); its dense
        // row is still written, and the dense reference masks it out.
        const bool cached = t / block_size >= layout.first_block[i];
        const std::int32_t block = cached ? s.block_table[static_cast<std::size_t>(t / block_size)] : 0;
        const std::int64_t slot = t % block_size;
        for (std::int32_t h = 0; h < kvh; ++h) {
          const std::int64_t cache_row = geo.offset(block, h, slot);
          const std::int64_t dense_row = ((layout.kv_starts[i] + t) * kvh + h) * d;
          for (std::int32_t x = 0; x < d; ++x) {
            const float kx = content_value(k_seed, h, x);
            const float vx = content_value(v_seed, h, x);
            kv.keys.store(dense_row + x, kx);
            kv.values.store(dense_row + x, vx);
            if (!cached) continue;
            kv.k_cache.store(cache_row + x, kx);
            kv.v_cache.store(cache_row + x, vx);
          }
        }
      }
    }
  }
  return kv;
}

// The queries [query tokens, q_heads, head_dim]: the last query_len positions of each
// sequence, in packed order, from (request, seq, position) identities.
HostTensor make_queries(const std::vector<SampledSequence>& seqs, const kernels::PackedBatch& packed,
                        const ValidatorSettings& st) {
  const std::int32_t qh = st.num_q_heads;
  const std::int32_t d = st.head_dim;
  HostTensor query(st.dtype, packed.num_query_tokens * qh * d);
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
  return query;
}

// The paged computation on `backend`, in the dtype it writes; NaN where it wrote nothing.
// Decode (no query_starts) when every query_len is 1.
HostTensor run_paged(const PagedAttentionBackend& backend, const HostTensor& query, KvContent& kv,
                     const BatchLayout& layout, std::int32_t block_size, bool decode, float scale,
                     const kernels::AttentionMask& mask, const ValidatorSettings& st) {
  const std::int64_t nq = layout.packed.num_query_tokens;
  HostTensor out(backend.output_dtype(st.dtype), nq * st.num_q_heads * st.head_dim);
  out.fill_nan();
  kernels::PagedAttentionArgs a;
  a.query = TensorView::contiguous(query.data(), query.dtype(), {nq, st.num_q_heads, st.head_dim});
  a.out = TensorView::contiguous(out.data(), out.dtype(), {nq, st.num_q_heads, st.head_dim});
  a.k_cache = cache_view(kv.k_cache, layout, block_size, st);
  a.v_cache = cache_view(kv.v_cache, layout, block_size, st);
  a.block_table = layout.packed.block_table_view();
  a.kv_lens = layout.packed.kv_lens_view();
  if (!decode) a.query_starts = layout.packed.query_starts_view();
  a.scale = scale;
  a.mask = mask;
  backend.run(a, layout.packed.max_query_len);
  return out;
}

// The ground truth, in f32: dense attention over each sequence's logical token list.
HostTensor dense_reference(const HostTensor& query, const KvContent& kv, const BatchLayout& layout, bool decode,
                           float scale, const kernels::AttentionMask& mask, const ValidatorSettings& st) {
  const std::int64_t nq = layout.packed.num_query_tokens;
  const std::int64_t total_kv = layout.packed.total_kv_tokens;
  HostTensor ref(DType::kFloat32, nq * st.num_q_heads * st.head_dim);
  kernels::DenseAttentionArgs da;
  da.query = TensorView::contiguous(query.data(), query.dtype(), {nq, st.num_q_heads, st.head_dim});
  da.out = TensorView::contiguous(ref.data(), DType::kFloat32, {nq, st.num_q_heads, st.head_dim});
  da.keys = TensorView::contiguous(kv.keys.data(), kv.keys.dtype(), {total_kv, st.num_kv_heads, st.head_dim});
  da.values = TensorView::contiguous(kv.values.data(), kv.values.dtype(), {total_kv, st.num_kv_heads, st.head_dim});
  da.kv_starts = TensorView::contiguous(layout.kv_starts.data(), DType::kInt32,
                                        {static_cast<std::int64_t>(layout.kv_starts.size())});
  if (!decode) da.query_starts = layout.packed.query_starts_view();
  da.scale = scale;
  da.mask = mask;
  kernels::reference_dense_attention(da);
  return ref;
}

// Compares `out` with `ref` element by element into c: the largest error, the non-finite and
// out-of-tolerance counts, and the worst element (the first non-finite one, else the
// largest error).
// Rows of `out` are `d` wide, rows of `ref` ref_d >= d (a latent reference is latent_dim wide,
// of which the first d are the value).
void compare(const std::vector<SampledSequence>& seqs, const kernels::PackedBatch& packed, const HostTensor& out,
             const HostTensor& ref, const Tolerance& tol, std::int32_t qh, std::int32_t d, std::int32_t ref_d,
             BatchCheck& c) {
  double worst = -1;
  for (std::size_t i = 0; i < seqs.size(); ++i) {
    const SampledSequence& s = seqs[i];
    for (std::int64_t j = 0; j < s.query_len; ++j) {
      const std::int64_t row = packed.query_starts[i] + j;
      for (std::int32_t h = 0; h < qh; ++h) {
        for (std::int32_t x = 0; x < d; ++x) {
          const double o = out.load((row * qh + h) * d + x);
          const double r = ref.load((row * qh + h) * ref_d + x);
          const double err = std::abs(o - r);
          c.max_abs_ref = std::max(c.max_abs_ref, std::abs(r));
          const bool finite = std::isfinite(o);
          if (!finite) ++c.nonfinite;
          if (!finite || !(err <= tol.atol + tol.rtol * std::abs(r))) ++c.violations;
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

// A latent batch's content: the paged latent cache (NaN in every slot no sequence wrote), in
// the cache dtype (fp8: the row / kLatentFp8Scale), and the dense rows in f32 holding exactly
// the values the cache holds (dequantized), the ground truth's keys and values.
struct LatentContent {
  HostTensor cache;  // [num_blocks, 1, block_size, latent_dim]
  HostTensor dense;  // [total kv tokens, 1, latent_dim], f32
};

// fp8 latent caches store row / kLatentFp8Scale: a scale that is not 1 checks that the kernel
// applies it to both the scores and the values.
constexpr float kLatentFp8Scale = 1.0f / 16;

LatentContent fill_latent(const std::vector<SampledSequence>& seqs, const BatchLayout& layout, std::int32_t block_size,
                          std::int32_t latent_dim, const ValidatorSettings& st) {
  const bool fp8 = st.dtype == DType::kFloat8E4M3;
  const float stored_scale = fp8 ? kLatentFp8Scale : 1.0f;
  LatentContent lc{HostTensor(st.dtype, static_cast<std::int64_t>(layout.num_blocks) * block_size * latent_dim),
                   HostTensor(DType::kFloat32, layout.packed.total_kv_tokens * latent_dim)};
  lc.cache.fill_nan();
  HostTensor one(st.dtype, 1);  // rounds a value as the cache stores it
  for (std::size_t i = 0; i < seqs.size(); ++i) {
    const SampledSequence& s = seqs[i];
    for (const TokenRun& run : s.tokens) {
      const std::uint64_t origin = hash_origin(run.origin);
      for (std::int64_t t = run.start; t < run.start + run.length && t < s.kv_len; ++t) {
        const std::uint64_t seed = kv_token_seed(st.seed, KvPart::kKey, origin, run.offset + (t - run.start));
        const std::int32_t block = s.block_table[static_cast<std::size_t>(t / block_size)];
        const std::int64_t cache_row = (static_cast<std::int64_t>(block) * block_size + t % block_size) * latent_dim;
        const std::int64_t dense_row = (layout.kv_starts[i] + t) * latent_dim;
        for (std::int32_t x = 0; x < latent_dim; ++x) {
          one.store(0, content_value(seed, 0, x) / stored_scale);
          lc.cache.store(cache_row + x, static_cast<float>(one.load(0)));
          lc.dense.store(dense_row + x, static_cast<float>(one.load(0) * stored_scale));
        }
      }
    }
  }
  return lc;
}

// Validator::run's work for a latent (MLA) file: the latent cache, queries latent_dim wide (of
// `query_dtype`), the backend's latent kernel, and the dense reference with K = V = the
// latent row.
void check_latent(const PagedAttentionBackend& backend, const ValidatorSettings& settings, DType query_dtype,
                  const BatchFileHeader& header, const Tolerance& tolerance, const std::vector<SampledSequence>& seqs,
                  const BatchLayout& layout, bool decode, BatchCheck& c) {
  const std::int32_t block_size = header.block_size;
  const std::int32_t ld = header.latent_dim;
  const std::int32_t vd = header.value_dim;
  const std::int32_t qh = settings.num_q_heads;
  const std::int64_t nq = layout.packed.num_query_tokens;
  LatentContent lc = fill_latent(seqs, layout, block_size, ld, settings);
  ValidatorSettings qs = settings;
  qs.dtype = query_dtype;
  qs.head_dim = ld;
  const HostTensor query = make_queries(seqs, layout.packed, qs);
  // DeepSeek's softmax scale is 1/sqrt(qk_nope + qk_rope); the contents only need a scale that
  // keeps the scores of ~latent_dim-term products moderate.
  const float scale = 1.0f / std::sqrt(static_cast<float>(ld));
  HostTensor out(backend.output_dtype(qs.dtype), nq * qh * vd);
  out.fill_nan();
  kernels::LatentAttentionArgs a;
  a.query = TensorView::contiguous(query.data(), query.dtype(), {nq, qh, ld});
  a.out = TensorView::contiguous(out.data(), out.dtype(), {nq, qh, vd});
  a.latent_cache = TensorView::contiguous(lc.cache.data(), lc.cache.dtype(), {layout.num_blocks, 1, block_size, ld});
  a.block_table = layout.packed.block_table_view();
  a.kv_lens = layout.packed.kv_lens_view();
  if (!decode) a.query_starts = layout.packed.query_starts_view();
  a.scale = scale;
  a.cache_scale = settings.dtype == DType::kFloat8E4M3 ? kLatentFp8Scale : 1.0f;
  backend.run_latent(a, layout.packed.max_query_len);
  // Ground truth: dense attention with one KV head whose K and V are the latent row; its first
  // value_dim output columns are MLA's output (kernels/latent_args.h).
  HostTensor ref(DType::kFloat32, nq * qh * ld);
  const std::int64_t total_kv = layout.packed.total_kv_tokens;
  kernels::DenseAttentionArgs da;
  da.query = a.query;
  da.out = TensorView::contiguous(ref.data(), DType::kFloat32, {nq, qh, ld});
  da.keys = TensorView::contiguous(lc.dense.data(), DType::kFloat32, {total_kv, 1, ld});
  da.values = da.keys;
  da.kv_starts = TensorView::contiguous(layout.kv_starts.data(), DType::kInt32,
                                        {static_cast<std::int64_t>(layout.kv_starts.size())});
  if (!decode) da.query_starts = layout.packed.query_starts_view();
  da.scale = scale;
  kernels::reference_dense_attention(da);
  compare(seqs, layout.packed, out, ref, tolerance, qh, vd, ld, c);
}

}  // namespace

void Validator::run(const SampledBatch& batch, BatchCheck& c) const {
  const std::vector<SampledSequence>& seqs = batch.sequences;
  const std::int32_t block_size = header_.block_size;
  const BatchLayout layout = layout_batch(seqs, header_);
  if (layout.packed.num_query_tokens == 0) return;  // nothing attends: nothing to compare
  if (header_.latent()) {
    check_latent(*backend_, settings_, query_dtype(), header_, tolerance_, seqs, layout, c.decode, c);
    return;
  }
  // Some sequence attends, so some kv_len >= 1 and the batch reads at least one block.
  KvContent kv = fill_kv(seqs, layout, block_size, settings_);
  const HostTensor query = make_queries(seqs, layout.packed, settings_);
  const float scale = 1.0f / std::sqrt(static_cast<float>(settings_.head_dim));
  const HostTensor out = run_paged(*backend_, query, kv, layout, block_size, c.decode, scale, header_.mask, settings_);
  const HostTensor ref = dense_reference(query, kv, layout, c.decode, scale, header_.mask, settings_);
  compare(seqs, layout.packed, out, ref, tolerance_, settings_.num_q_heads, settings_.head_dim, settings_.head_dim, c);
}

}  // namespace pagesim::sim

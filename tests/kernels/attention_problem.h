// Test support: random paged-attention problems with their logical (dense) twin.
//
// An AttentionProblem holds, in host memory, queries, a paged K/V cache filled through
// kv_layout.h from per-sequence logical K/V, the packed block table, and the same K/V laid
// out contiguously per sequence for the dense reference. Physical blocks are a seeded random
// permutation; sequences may share their first full blocks with sequence 0 (as after a fork
// or a prefix-cache hit), with identical logical content. Every slot no sequence owns — the
// padding of last blocks and spare blocks — holds NaN, so a kernel that reads one fails.
// Deterministic for a given spec (seeded).
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <vector>

#include "kernels/attention_args.h"
#include "kernels/cache_op_args.h"
#include "kernels/kv_layout.h"

namespace pagesim::kernels {
// Readable GoogleTest parameter names (found by argument-dependent lookup).
inline void PrintTo(DType t, std::ostream* os) { *os << dtype_name(t); }
inline void PrintTo(KvLayout l, std::ostream* os) { *os << (l == KvLayout::kHND ? "HND" : "NHD"); }
}  // namespace pagesim::kernels

namespace pagesim::kernels::testing {

struct ProblemSpec {
  std::vector<std::int32_t> kv_lens;     // one per sequence
  std::vector<std::int32_t> query_lens;  // empty: decode (one query per sequence)
  std::int32_t num_q_heads = 4;
  std::int32_t num_kv_heads = 1;
  std::int32_t head_dim = 64;
  std::int32_t block_size = 16;
  DType dtype = DType::kFloat32;
  KvLayout layout = KvLayout::kHND;
  bool alibi = false;
  AttentionMask mask;               // default causal; both paged_args and dense_args carry it
  float scale = 0;                  // 0: 1 / sqrt(head_dim)
  float query_magnitude = 1;        // queries uniform in [-m, m] (larger: peakier softmax)
  std::int32_t shared_prefix_blocks = 0;  // full blocks sequences share with sequence 0
  std::int32_t spare_blocks = 3;    // NaN-filled blocks nobody owns
  std::uint64_t seed = 1;
};

class AttentionProblem {
 public:
  explicit AttentionProblem(const ProblemSpec& spec);

  const ProblemSpec& spec() const { return spec_; }
  const PackedBatch& batch() const { return batch_; }
  bool decode() const { return spec_.query_lens.empty(); }
  std::int64_t num_query_tokens() const { return batch_.num_query_tokens; }
  std::int32_t num_blocks() const { return num_blocks_; }
  float scale() const;

  // Views of the host buffers. `out` is supplied by the caller:
  // [num_query_tokens, num_q_heads, head_dim] of any float dtype.
  PagedAttentionArgs paged_args(const TensorView& out) const;
  DenseAttentionArgs dense_args(const TensorView& out) const;
  TensorView query_view() const;
  TensorView k_cache_view() const;
  TensorView v_cache_view() const;
  TensorView alibi_view() const;
  // The logical keys/values, [total_kv_tokens, num_kv_heads, head_dim], and their kv_starts.
  TensorView keys_view() const;
  TensorView values_view() const;
  TensorView kv_starts_view() const;

  // Raw host bytes (for copies to the device).
  const std::vector<std::byte>& query_bytes() const { return query_; }
  const std::vector<std::byte>& k_cache_bytes() const { return k_cache_; }
  const std::vector<std::byte>& v_cache_bytes() const { return v_cache_; }
  const std::vector<float>& alibi_slopes() const { return alibi_; }

  // Slot ids (kv_layout.h slot_id) of each logical token of each sequence, concatenated in
  // kv_starts order: what reshape_and_cache would be given to write the whole batch.
  const std::vector<std::int64_t>& slot_mapping() const { return slots_; }

 private:
  ProblemSpec spec_;
  PackedBatch batch_;
  std::int32_t num_blocks_ = 0;
  std::vector<std::byte> query_, k_cache_, v_cache_, keys_, values_;
  std::vector<std::int32_t> kv_starts_;
  std::vector<float> alibi_;
  std::vector<std::int64_t> slots_;
};

// ALiBi slopes of the ALiBi paper for n heads (geometric, 2^(-8/n) ratio for powers of 2).
std::vector<float> alibi_slopes(std::int32_t n);

// Fills `n` elements of `dtype` at `data` with uniform values in [-magnitude, magnitude].
void fill_uniform(void* data, DType dtype, std::int64_t n, float magnitude, std::uint64_t seed);
// Fills with NaN (quiet) of `dtype`.
void fill_nan(void* data, DType dtype, std::int64_t n);

// Comparison of a result against a reference, both read as double.
struct Comparison {
  double max_abs_error = 0;
  double max_ref = 0;
  double rel_l2_error = 0;   // ||out - ref|| / ||ref|| (0 when both are 0)
  std::int64_t nonfinite = 0;  // NaN or inf elements in `out`
  std::int64_t worst_index = -1;
};
Comparison compare(const TensorView& out, const TensorView& ref);

// Tolerances per dtype of the inputs (the kernels compute in fp32; fp16/bf16 round P and the
// output). An element passes if |out - ref| <= atol + rtol * |ref|.
struct Tolerance {
  double atol = 0;
  double rtol = 0;
  double rel_l2 = 0;
};
Tolerance tolerance_for(DType dtype);
// True if every element passes, nothing is non-finite and rel_l2 is within bounds.
bool within(const TensorView& out, const TensorView& ref, const Tolerance& tol, Comparison* details);

}  // namespace pagesim::kernels::testing

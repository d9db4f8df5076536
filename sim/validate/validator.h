// Validator: checks one allocator's sampled batches (sampled_batch.h) by running the paged
// attention kernels on them and comparing with dense attention over each sequence's logical
// token list — the check that closes the loop between the simulator and the kernels.
//
// For one batch: a K and a V cache (kernels/kv_layout.h, kHND) are allocated for physical
// blocks 0 .. (largest block id the batch reads) and every slot is set to NaN, so a slot no
// sequence wrote poisons any read of it. Then, in batch order, for every sequence and every
// logical token t < kv_len, the K/V of t's identity (validator_content.h) are written into
// slot (block_table[t / B], t % B). Sequences that map different identities to one slot (a
// broken block table, a missing copy-on-write copy, a bad prefix hit, a block reused while
// still referenced) are not detected here: later writes win, and the attention comparison
// catches the sequence whose slot was overwritten. Queries: one row per (sequence, query
// position, query head), validator_content.h. The paged computation — done by the backend
// of the settings' device (paged_attention_backend.h): the CPU reference, or on a GPU the
// CUDA kernels (decode when every query_len is 1, else prefill) — is compared
// with reference_dense_attention over K/V built directly from the identities (never read
// back from the cache). A batch passes when every output element satisfies
// |out - ref| <= atol + rtol * |ref| and none is NaN or infinite.
//
// Sensitivity: a single wrong token among n keys moves an output by about |Δv| / n with
// these uniform contents, so f32 (the default) catches one bad token in contexts up to
// ~10^5 tokens on the CPU and ~10^4 on CUDA; f16/bf16 exercise the production dtypes but
// only catch faults in short contexts or touching many tokens.
//
// Windowed layer groups (header.mask a sliding window or chunk): block-table entries before a
// sequence's attended blocks (kernels::attended_blocks) are neither checked nor written — a
// windowed allocator frees them — and point, for the kernel, at one extra all-NaN block, so
// a kernel that reads out of the window fails; every attended key must have a block of the
// pool (else a batch error naming the entry); paged and dense both apply the mask, as do the
// CUDA kernels (validated on an H200: experiments/results/kernels-h200.md).
//
// Memory of one check: the two caches (blocks 0 .. the largest id the batch reads), the dense
// K/V of every token, the queries and two outputs — linear in the batch's tokens and blocks.
// Both CPU references work in tiles (kernels/reference_attention.h), so a long prefill costs
// no query_len x kv_len scratch (validator_test checks an 8,192-token prefill under a limit).
//
// A Validator is immutable after construction and refers to its backend, which must outlive
// it; check() allocates per batch and may run on several threads at once for the CPU device
// (CUDA: one thread; it uses the current device).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kernels/dtype.h"
#include "sim/validate/paged_attention_backend.h"
#include "sim/validate/sampled_batch.h"

namespace pagesim::sim {

// "f32" / "f16" / "bf16"; throws ValidateError naming `what` otherwise.
kernels::DType parse_kv_dtype(std::string_view name, std::string_view what);

// Per-element tolerance: |out - ref| <= atol + rtol * |ref|.
struct Tolerance {
  double atol = 0;
  double rtol = 0;
};

// Defaults (the contents are uniform in [-1, 1), so |ref| <= 1):
//   cpu, any dtype   atol 1e-6, rtol 0      both sides compute in double from identical
//                                           stored inputs; they differ by ~1 f32 ulp (<1e-7)
//   cuda f32         atol 2e-5, rtol 1e-4   fp32 accumulation (the kernels' test bounds)
//   cuda f16         atol 2e-3, rtol 5e-3   P and the output are rounded to f16
//   cuda bf16        atol 1.6e-2, rtol 2e-2 P and the output are rounded to bf16
Tolerance default_tolerance(ValidateDevice device, kernels::DType dtype);

struct ValidatorSettings {
  ValidateDevice device = ValidateDevice::kCpu;
  std::int32_t num_q_heads = 4;       // query heads of the synthetic model
  std::int32_t num_kv_heads = 2;      // KV heads (GQA when < num_q_heads; must divide it)
  std::int32_t head_dim = 64;         // elements per head (CUDA: one of limits::kHeadDims)
  kernels::DType dtype = kernels::DType::kFloat32;  // storage of queries, K/V (and CUDA out)
  std::optional<double> atol;         // absolute tolerance; unset: default_tolerance
  std::optional<double> rtol;         // relative tolerance; unset: default_tolerance
  std::uint64_t seed = 0;             // of all synthetic content
};

// The outcome of one batch.
struct BatchCheck {
  std::int64_t index = 0;         // 0-based position of the batch in the file
  std::int64_t iteration = 0;     // the simulator's iteration
  std::int64_t sequences = 0;
  std::int64_t kv_tokens = 0;     // Σ kv_len
  std::int64_t query_tokens = 0;  // Σ query_len
  bool decode = false;            // every query_len is 1 (decode kernel on CUDA)
  double max_abs_error = 0;       // max |out - ref| over finite elements
  double max_abs_ref = 0;         // max |ref|
  std::int64_t nonfinite = 0;     // NaN or infinite output elements
  std::int64_t violations = 0;    // elements outside the tolerance (non-finite included)
  // The element with the largest error (or the first non-finite one); -1 when none.
  std::int64_t worst_sequence = -1;  // index in the batch
  std::uint64_t worst_request = 0;
  std::uint64_t worst_seq = 0;
  std::int64_t worst_position = -1;  // logical position of the query
  std::int32_t worst_q_head = -1;
  std::string error;              // non-empty: the batch could not be run (counts as a failure)
  bool passed = false;

  // max_abs_error / max_abs_ref (0 when both are 0; infinite when any output is non-finite).
  double relative_error() const;
};

class Validator {
 public:
  // Runs on backends.get(settings.device). Throws ValidateError for settings it cannot run:
  // heads not positive or not a multiple, head_dim < 1, a non-float dtype, bad tolerances;
  // then no backend for the device (for CUDA: "built without CUDA"), then whatever the
  // backend refuses (check_supported: for CUDA a block size / head size the kernels do not
  // support, or no usable device; the message names the value).
  // REQUIRES: the chosen backend outlives the Validator.
  Validator(const ValidatorSettings& settings, const BatchFileHeader& header, const PagedAttentionBackends& backends);

  // Fills, runs and compares one batch. Problems of the batch itself (a block id outside
  // [0, header.num_blocks), lengths beyond int32, a CUDA runtime error) are reported in
  // BatchCheck::error, never thrown. REQUIRES: token runs cover each sequence's kv_len (as
  // read_batch_file checks).
  BatchCheck check(const SampledBatch& batch, std::int64_t index) const;

  const ValidatorSettings& settings() const { return settings_; }
  const BatchFileHeader& header() const { return header_; }
  Tolerance tolerance() const { return tolerance_; }

 private:
  // check()'s work: lays the batch out, fills the caches and queries, runs the backend and
  // the dense reference, and compares them into `c`. Throws for problems of the batch.
  void run(const SampledBatch& batch, BatchCheck& c) const;
  // The queries' dtype: the settings' dtype, bf16 for an fp8 latent cache.
  kernels::DType query_dtype() const;

  ValidatorSettings settings_;
  BatchFileHeader header_;
  Tolerance tolerance_;
  const PagedAttentionBackend* backend_ = nullptr;  // not owned; backends.get(settings_.device)
};

}  // namespace pagesim::sim

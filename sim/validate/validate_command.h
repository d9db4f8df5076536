// `pagesim validate FILE [--device cpu|cuda]`: runs the Validator (validator.h) over every
// batch of a batches.jsonl file (sampled_batch.h), prints one row per batch and a summary.
//
// Output (to `out`):
//   FILE: allocator A, experiment E, block size B, N blocks, K batches
//   device cpu, f32, 4 query heads / 2 KV heads, head_dim 64, seed 0; pass: |err| <= atol + rtol*|ref|
//   batch  iteration  seqs  kv_tokens  queries  kind     max_abs_err  rel_err  result
//   ...    one row per batch; a failing row names its worst element or its error
//   summary: P of K batches pass ...
// Errors that stop the run (unreadable or malformed file, bad settings, CUDA asked for but
// not available) are one line on `err`. The device's computation is done by the backend
// `backends` holds for it (paged_attention_backend.h): main decides which devices its
// program offers. Stateless; safe to call from several threads with distinct streams
// (device cpu).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>

#include "sim/validate/paged_attention_backend.h"

namespace pagesim::sim {

struct ValidateOptions {
  std::filesystem::path file;       // batches.jsonl written by the simulator
  std::string device = "cpu";       // "cpu" (CPU reference) or "cuda" (the CUDA kernels)
  std::int32_t num_q_heads = 4;     // query heads of the synthetic model
  std::int32_t num_kv_heads = 2;    // KV heads; must divide num_q_heads (2 of 4: GQA)
  std::int32_t head_dim = 64;       // elements per head; cuda: 64, 80, 96, 112, 128 or 256
  std::string dtype = "f32";        // "f32", "f16" or "bf16": storage of queries and K/V
  std::optional<double> atol;       // per-element |out - ref| bound; unset: per device and
  std::optional<double> rtol;       //   dtype defaults (validator.h default_tolerance)
  std::uint64_t seed = 0;           // of the synthetic K/V and query content
};

// Returns 0 when every batch passes; 1 when a batch fails or cannot be run, the file has no
// batch, or an error stops the run (message on `err`; with no backend for options.device,
// for cuda: "device cuda: this pagesim was built without CUDA ...").
// REQUIRES: the backends outlive the call.
int run_validate_command(const ValidateOptions& options, const PagedAttentionBackends& backends, std::ostream& out,
                         std::ostream& err);

}  // namespace pagesim::sim

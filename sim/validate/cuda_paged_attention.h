// CudaPagedAttention: the CUDA backend of the Validator (paged_attention_backend.h) — the
// paged-attention kernels (kernels/paged_attention.h) run from host buffers: each run copies
// the query, caches, block table, kv_lens and query_starts to the device, runs paged_decode
// (the planner's choice of v1/v2) or paged_prefill, and copies the output back in the
// inputs' dtype. The device output is set to NaN first, so a row the kernel does not write
// fails the comparison.
//
// Built only with CUDA, as its own library (pagesim_validate_cuda), linked into pagesim-cuda
// and the tests that run it; pagesim links no CUDA library (sim/cli/cuda_handoff.h).
// Constructing one touches no CUDA runtime; check_supported asks for a device. Uses the
// current device; one caller at a time.
#pragma once

#include <cstdint>
#include <string>

#include "sim/validate/paged_attention_backend.h"

namespace pagesim::sim {

class CudaPagedAttention final : public PagedAttentionBackend {
 public:
  // True if the CUDA runtime reports a usable device; otherwise `why` (if not null) says
  // what the runtime said.
  static bool device_usable(std::string* why);

  ValidateDevice device() const override { return ValidateDevice::kCuda; }
  // Refuses, in this order: a block size or head size the kernels do not support
  // (kernels/limits.h), then the absence of a usable device. Each message starts
  // "device cuda: " and names the value and what is expected.
  void check_supported(std::int32_t block_size, std::int32_t head_dim) const override;
  // The kernels write their inputs' dtype.
  kernels::DType output_dtype(kernels::DType input) const override { return input; }
  void run(const kernels::PagedAttentionArgs& args, std::int32_t max_query_len) const override;
  void check_supported_latent(std::int32_t block_size, std::int32_t latent_dim, std::int32_t value_dim,
                              kernels::DType query, kernels::DType cache) const override;
  void run_latent(const kernels::LatentAttentionArgs& args, std::int32_t max_query_len) const override;
};

}  // namespace pagesim::sim

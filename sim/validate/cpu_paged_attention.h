// CpuPagedAttention: the CPU backend of the Validator (paged_attention_backend.h) — the
// double-precision reference kernels::reference_paged_attention, which takes any block size
// >= 1 and any head size and writes f32. Stateless; safe on several threads at once.
#pragma once

#include "sim/validate/paged_attention_backend.h"

namespace pagesim::sim {

class CpuPagedAttention final : public PagedAttentionBackend {
 public:
  ValidateDevice device() const override { return ValidateDevice::kCpu; }
  // Every geometry the Validator accepts is supported: never throws.
  void check_supported(std::int32_t block_size, std::int32_t head_dim) const override;
  kernels::DType output_dtype(kernels::DType input) const override;
  void run(const kernels::PagedAttentionArgs& args, std::int32_t max_query_len) const override;
  void check_supported_latent(std::int32_t block_size, std::int32_t latent_dim, std::int32_t value_dim,
                              kernels::DType query, kernels::DType cache) const override;
  void run_latent(const kernels::LatentAttentionArgs& args, std::int32_t max_query_len) const override;
};

}  // namespace pagesim::sim

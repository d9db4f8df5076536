#include "sim/validate/cpu_paged_attention.h"

#include "kernels/reference_attention.h"
#include "kernels/reference_latent_attention.h"

namespace pagesim::sim {

void CpuPagedAttention::check_supported(std::int32_t /*block_size*/, std::int32_t /*head_dim*/) const {}

// The reference computes in double and rounds once, to f32, whatever the inputs' dtype.
kernels::DType CpuPagedAttention::output_dtype(kernels::DType /*input*/) const { return kernels::DType::kFloat32; }

// The reference reads each sequence's query rows from args.query_starts: no max needed.
void CpuPagedAttention::run(const kernels::PagedAttentionArgs& args, std::int32_t /*max_query_len*/) const {
  kernels::reference_paged_attention(args);
}

// The reference takes any sizes and dtypes (reference_latent_attention.h).
void CpuPagedAttention::check_supported_latent(std::int32_t /*block_size*/, std::int32_t /*latent_dim*/,
                                               std::int32_t /*value_dim*/, kernels::DType /*query*/,
                                               kernels::DType /*cache*/) const {}

void CpuPagedAttention::run_latent(const kernels::LatentAttentionArgs& args, std::int32_t /*max_query_len*/) const {
  kernels::reference_latent_attention(args);
}

}  // namespace pagesim::sim

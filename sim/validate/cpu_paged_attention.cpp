#include "sim/validate/cpu_paged_attention.h"

#include "kernels/reference_attention.h"

namespace pagesim::sim {

void CpuPagedAttention::check_supported(std::int32_t /*block_size*/, std::int32_t /*head_dim*/) const {}

// The reference computes in double and rounds once, to f32, whatever the inputs' dtype.
kernels::DType CpuPagedAttention::output_dtype(kernels::DType /*input*/) const { return kernels::DType::kFloat32; }

// The reference reads each sequence's query rows from args.query_starts: no max needed.
void CpuPagedAttention::run(const kernels::PagedAttentionArgs& args, std::int32_t /*max_query_len*/) const {
  kernels::reference_paged_attention(args);
}

}  // namespace pagesim::sim

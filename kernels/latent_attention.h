// CUDA absorbed multi-head latent attention over a paged latent cache (latent_args.h says
// what it computes and how the work is cut), f16 or bf16 queries over an f16/bf16 or fp8
// cache of 576-wide rows, 512-wide outputs; decode and, with query_starts, several causal
// query tokens per sequence (speculative decoding, a chunk).
//
// All pointers inside the argument views are device pointers; the launch is asynchronous on
// `stream`. Arguments are validated on the host first (check_latent_attention_args with
// Backend::kCuda, plus plan consistency); anything unsupported or inconsistent throws
// KernelError before a launch, and a CUDA error at launch throws KernelError naming the
// kernel. Device-side table contents are the caller's contract: REQUIRES every kv_len >= 0,
// used block ids < num_blocks, query_starts well formed, every query_len <= the plan's
// max_query_len and kv_len <= its max_kv_len. Thread-safe: no global state.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/latent_args.h"

struct CUstream_st;

namespace pagesim::kernels {

// The plan's target CTA count on the current device: its multiprocessor count (one CTA of
// latent_smem_bytes fills one). Throws KernelError on a CUDA error.
std::int32_t latent_attention_target_ctas();

// `workspace`: device memory of at least plan.workspace_bytes, 256-byte aligned, used by no
// other launch in flight (may be null when that is 0). The plan must come from
// plan_latent_attention for a problem that covers these arguments.
void paged_latent_attention(const LatentAttentionArgs& args, const LatentPlan& plan, void* workspace,
                            std::size_t workspace_bytes, CUstream_st* stream);

}  // namespace pagesim::kernels

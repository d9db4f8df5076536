// CUDA paged attention: decode (v1 and v2) and prefill over the paged KV cache.
//
// All pointers inside the argument views are device pointers; the launch is asynchronous
// on `stream` (nullptr: the default stream). Arguments are validated on the host first
// (check_paged_attention_args with Backend::kCuda, plus plan consistency): anything
// unsupported or inconsistent throws KernelError before a launch, and a CUDA error at launch
// throws KernelError naming the kernel. Device-side table contents are the caller's contract:
// REQUIRES every kv_len >= 0, used block ids < num_blocks, query_starts well formed (see
// attention_args.h), the same kv_lens the plan was made from.
//
// Supported: f32, f16, bf16 (one dtype for query, out, K, V; fp32 accumulation); head sizes
// and block sizes of limits.h; any GQA/MQA group; ALiBi; scale. Thread-safe: no global state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/attention_args.h"
#include "kernels/decode_plan.h"
#include "kernels/prefill_plan.h"

struct CUstream_st;

namespace pagesim::kernels {

using CudaStream = CUstream_st*;  // cudaStream_t

// CTA slots of the decode kernel decode_kernel_for(dtype, group_size) picks, at head_dim, on
// the current device, from the occupancy API. Throws KernelError for an unsupported dtype or
// head size, a group_size below 1, or a CUDA error.
DecodeDeviceCaps decode_device_caps(DType dtype, std::int32_t head_dim, std::int32_t group_size);
// The same for a problem's dtype, head_dim and group (num_q_heads / num_kv_heads).
DecodeDeviceCaps decode_device_caps(const DecodeProblem& problem);

// The planner's view of decode arguments; kv_lens_host must mirror args.kv_lens (host copy).
DecodeProblem decode_problem(const PagedAttentionArgs& args,
                             std::span<const std::int32_t> kv_lens_host);

// Decode: one query per sequence (args.query_starts empty). `workspace` is device memory of
// at least plan.workspace_bytes (may be null when that is 0), 256-byte aligned, not used by
// any other launch in flight. The plan must come from plan_decode / make_decode_plan for
// these arguments.
void paged_decode(const PagedAttentionArgs& args, const DecodePlan& plan, void* workspace,
                  std::size_t workspace_bytes, CudaStream stream);

// The planner's view of prefill arguments; max_query_len is the host-side maximum of the
// batch's query lengths.
PrefillProblem prefill_problem(const PagedAttentionArgs& args, std::int32_t max_query_len);

// Prefill with history and causal mask (args.query_starts given). The plan must come from
// plan_prefill(prefill_problem(args, max_query_len)); REQUIRES every query_len <=
// max_query_len.
void paged_prefill(const PagedAttentionArgs& args, const PrefillPlan& plan, CudaStream stream);

}  // namespace pagesim::kernels

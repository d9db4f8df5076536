// The small kernels of `pagesim profile`'s fused-MoE timing (profile_measure.h): the steps of
// vLLM's fused MoE besides its two grouped GEMMs, which cuBLAS runs per expert. Each follows
// the vLLM op it stands for (moe_kernels.cu cites them):
//   moe_topk_softmax   per token: softmax over the experts' router logits, the top_k largest,
//                      renormalised to sum to 1 (vLLM fused_topk, csrc/moe/topk_softmax_kernels.cu)
//   moe_gather_rows    rows of the input in expert order (vLLM's Triton kernel reads them
//                      through sorted_token_ids; cuBLAS needs them contiguous)
//   moe_silu_and_mul   SiLU(gate) x up over [gate | up] rows (vLLM csrc/activation_kernels.cu
//                      silu_and_mul); without `gated`, SiLU alone
//   moe_combine        each token's top_k expert rows summed, weighted by their router
//                      weights, plus an optional shared-expert row (vLLM: the down GEMM's
//                      routed-weight multiply, then ops.moe_sum)
// Elements are fp16, or bf16 where `bf16` is set (rows of 2-byte values; router weights fp32),
// launched on `stream`, asynchronous; launch errors throw KernelError naming the kernel.
// Callable from host C++ (no CUDA syntax here).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace pagesim::sim::detail {

// logits [tokens, experts] fp16 -> ids [tokens, top_k] int32, weights [tokens, top_k] fp32.
// REQUIRES: 1 <= top_k <= experts <= 1024.
void moe_topk_softmax(const void* logits, std::int32_t tokens, std::int32_t experts, std::int32_t top_k,
                      std::int32_t* ids, float* weights, bool bf16, cudaStream_t stream);

// out[i, :] = in[rows[i], :] for i < n_rows; rows of `width` 2-byte elements.
void moe_gather_rows(const void* in, const std::int32_t* rows, std::int32_t n_rows, std::int32_t width, void* out,
                     cudaStream_t stream);

// gated: out[r, c] = silu(in[r, c]) * in[r, width + c] (in has 2 width columns); else
// out[r, c] = silu(in[r, c]) (in has width columns). out has width columns.
void moe_silu_and_mul(const void* in, std::int32_t rows, std::int32_t width, bool gated, void* out, bool bf16,
                      cudaStream_t stream);

// out[t, :] = (add ? add[t, :] : 0) + sum over j < top_k of weights[t·top_k + j] ·
// expert_rows[slot[t·top_k + j], :]; rows of `width` elements, fp32 accumulation.
void moe_combine(const void* expert_rows, const std::int32_t* slot, const float* weights, std::int32_t tokens,
                 std::int32_t top_k, std::int32_t width, const void* add, void* out, bool bf16,
                 cudaStream_t stream);

}  // namespace pagesim::sim::detail

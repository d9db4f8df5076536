// The fused-MoE helper kernels of moe_kernels.h. Simple and bandwidth-bound: one warp per
// token for the routing, a grid-stride loop over elements for the rest. They are timed as
// part of an MoE layer, so they only need to be no slower than vLLM's own.
#include "sim/profile/moe_kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cfloat>

#include "kernels/cuda/cuda_host.h"

namespace pagesim::sim::detail {

namespace {

namespace pk = pagesim::kernels;

__device__ float to_float(__half v) { return __half2float(v); }
__device__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
template <class T>
__device__ T from_float(float v);
template <>
__device__ __half from_float<__half>(float v) {
  return __float2half(v);
}
template <>
__device__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16(v);
}

constexpr int kWarp = 32;
constexpr int kMaxExpertsPerLane = 32;  // experts <= 1024 = 32 lanes x 32

// One warp per token. Lane l holds experts l, l + 32, ...; softmax by warp reductions, then
// top_k rounds of a warp argmax (ties to the lower expert), as vLLM's topk_softmax: softmax
// over all experts, top-k of the probabilities, renormalised over the k chosen (Mixtral's
// renormalize=True, vllm/model_executor/models/mixtral.py MixtralMoE).
template <class T>
__global__ void topk_softmax_kernel(const T* logits, int tokens, int experts, int top_k, std::int32_t* ids,
                                    float* weights) {
  const int token = blockIdx.x * (blockDim.x / kWarp) + threadIdx.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (token >= tokens) return;
  const T* row = logits + static_cast<std::size_t>(token) * experts;
  float p[kMaxExpertsPerLane];
  float max_logit = -FLT_MAX;
  for (int i = 0; i < kMaxExpertsPerLane; ++i) {
    const int e = lane + i * kWarp;
    p[i] = e < experts ? to_float(row[e]) : -FLT_MAX;
    max_logit = fmaxf(max_logit, p[i]);
  }
  for (int o = kWarp / 2; o > 0; o /= 2) max_logit = fmaxf(max_logit, __shfl_xor_sync(0xffffffffu, max_logit, o));
  float sum = 0;
  for (int i = 0; i < kMaxExpertsPerLane; ++i) {
    const int e = lane + i * kWarp;
    p[i] = e < experts ? __expf(p[i] - max_logit) : -1.f;  // -1: never chosen
    if (e < experts) sum += p[i];
  }
  for (int o = kWarp / 2; o > 0; o /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, o);
  float chosen_sum = 0;
  for (int k = 0; k < top_k; ++k) {
    float best = -1.f;
    int best_e = experts;
    for (int i = 0; i < kMaxExpertsPerLane; ++i) {
      const int e = lane + i * kWarp;
      if (p[i] > best) {
        best = p[i];
        best_e = e;
      }
    }
    for (int o = kWarp / 2; o > 0; o /= 2) {
      const float other = __shfl_xor_sync(0xffffffffu, best, o);
      const int other_e = __shfl_xor_sync(0xffffffffu, best_e, o);
      if (other > best || (other == best && other_e < best_e)) {
        best = other;
        best_e = other_e;
      }
    }
    if (lane == best_e % kWarp) p[best_e / kWarp] = -1.f;  // its owner drops it
    if (lane == 0) {
      ids[static_cast<std::size_t>(token) * top_k + k] = best_e;
      weights[static_cast<std::size_t>(token) * top_k + k] = best / sum;
    }
    chosen_sum += best / sum;
  }
  if (lane == 0) {
    for (int k = 0; k < top_k; ++k) weights[static_cast<std::size_t>(token) * top_k + k] /= chosen_sum;
  }
}

// Rows are copied as 16-byte vectors when `width` allows, else as 2-byte elements (a copy of
// bits, so fp16 and bf16 alike).
__global__ void gather_rows_kernel(const std::uint16_t* in, const std::int32_t* rows, int n_rows, int width,
                                   std::uint16_t* out) {
  const std::size_t total = static_cast<std::size_t>(n_rows) * width;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t r = i / width, c = i % width;
    out[i] = in[static_cast<std::size_t>(rows[r]) * width + c];
  }
}

__global__ void gather_rows_vec_kernel(const uint4* in, const std::int32_t* rows, int n_rows, int vecs, uint4* out) {
  const std::size_t total = static_cast<std::size_t>(n_rows) * vecs;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t r = i / vecs, c = i % vecs;
    out[i] = in[static_cast<std::size_t>(rows[r]) * vecs + c];
  }
}

__device__ float silu(float x) { return x / (1.f + __expf(-x)); }

template <class T>
__global__ void silu_and_mul_kernel(const T* in, int rows, int width, bool gated, T* out) {
  const std::size_t total = static_cast<std::size_t>(rows) * width;
  const std::size_t in_width = gated ? 2 * static_cast<std::size_t>(width) : width;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t r = i / width, c = i % width;
    const float g = silu(to_float(in[r * in_width + c]));
    out[i] = from_float<T>(gated ? g * to_float(in[r * in_width + width + c]) : g);
  }
}

template <class T>
__global__ void combine_kernel(const T* expert_rows, const std::int32_t* slot, const float* weights, int tokens,
                               int top_k, int width, const T* add, T* out) {
  const std::size_t total = static_cast<std::size_t>(tokens) * width;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t t = i / width, c = i % width;
    float acc = add != nullptr ? to_float(add[i]) : 0.f;
    for (int j = 0; j < top_k; ++j) {
      const std::size_t a = t * top_k + j;
      acc += weights[a] * to_float(expert_rows[static_cast<std::size_t>(slot[a]) * width + c]);
    }
    out[i] = from_float<T>(acc);
  }
}

constexpr int kThreads = 256;

// Blocks for a grid-stride loop over `total` elements: enough to fill the device, no more.
unsigned blocks_for(std::size_t total) {
  const std::size_t b = (total + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 65535 ? 65535 : b));
}

}  // namespace

void moe_topk_softmax(const void* logits, std::int32_t tokens, std::int32_t experts, std::int32_t top_k,
                      std::int32_t* ids, float* weights, bool bf16, cudaStream_t stream) {
  if (tokens == 0) return;
  if (experts < 1 || experts > kWarp * kMaxExpertsPerLane || top_k < 1 || top_k > experts)
    pk::throw_cuda_error(cudaErrorInvalidValue, "profile", "moe_topk_softmax (experts or top_k out of range)");
  constexpr int kTokensPerBlock = kThreads / kWarp;
  const unsigned blocks = (tokens + kTokensPerBlock - 1) / kTokensPerBlock;
  if (bf16) {
    topk_softmax_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(logits), tokens, experts,
                                                         top_k, ids, weights);
  } else {
    topk_softmax_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const __half*>(logits), tokens, experts, top_k,
                                                         ids, weights);
  }
  pk::check_launch("profile", "moe_topk_softmax");
}

void moe_gather_rows(const void* in, const std::int32_t* rows, std::int32_t n_rows, std::int32_t width, void* out,
                     cudaStream_t stream) {
  if (n_rows == 0) return;
  constexpr int kHalvesPerVec = sizeof(uint4) / sizeof(std::uint16_t);
  if (width % kHalvesPerVec == 0) {
    const int vecs = width / kHalvesPerVec;
    gather_rows_vec_kernel<<<blocks_for(static_cast<std::size_t>(n_rows) * vecs), kThreads, 0, stream>>>(
        static_cast<const uint4*>(in), rows, n_rows, vecs, static_cast<uint4*>(out));
  } else {
    gather_rows_kernel<<<blocks_for(static_cast<std::size_t>(n_rows) * width), kThreads, 0, stream>>>(
        static_cast<const std::uint16_t*>(in), rows, n_rows, width, static_cast<std::uint16_t*>(out));
  }
  pk::check_launch("profile", "moe_gather_rows");
}

void moe_silu_and_mul(const void* in, std::int32_t rows, std::int32_t width, bool gated, void* out, bool bf16,
                      cudaStream_t stream) {
  if (rows == 0) return;
  const unsigned blocks = blocks_for(static_cast<std::size_t>(rows) * width);
  if (bf16) {
    silu_and_mul_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(in), rows, width, gated,
                                                         static_cast<__nv_bfloat16*>(out));
  } else {
    silu_and_mul_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const __half*>(in), rows, width, gated,
                                                         static_cast<__half*>(out));
  }
  pk::check_launch("profile", "moe_silu_and_mul");
}

void moe_combine(const void* expert_rows, const std::int32_t* slot, const float* weights, std::int32_t tokens,
                 std::int32_t top_k, std::int32_t width, const void* add, void* out, bool bf16,
                 cudaStream_t stream) {
  if (tokens == 0) return;
  const unsigned blocks = blocks_for(static_cast<std::size_t>(tokens) * width);
  if (bf16) {
    using B = __nv_bfloat16;
    combine_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const B*>(expert_rows), slot, weights, tokens, top_k,
                                                    width, static_cast<const B*>(add), static_cast<B*>(out));
  } else {
    combine_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const __half*>(expert_rows), slot, weights, tokens,
                                                    top_k, width, static_cast<const __half*>(add),
                                                    static_cast<__half*>(out));
  }
  pk::check_launch("profile", "moe_combine");
}

}  // namespace pagesim::sim::detail

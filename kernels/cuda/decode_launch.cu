// Host side of paged decode: validation, plan checks, dispatch, and the v2 merge kernel.
#include <cuda_runtime.h>

#include <limits>
#include <string>

#include "kernels/arg_check.h"
#include "kernels/cuda/cuda_host.h"
#include "kernels/cuda/decode_params.h"
#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/dispatch.h"
#include "kernels/kv_layout.h"
#include "kernels/launch_grid.h"
#include "kernels/limits.h"
#include "kernels/paged_attention.h"

namespace pagesim::kernels {

namespace detail {

namespace {

constexpr int kMergeThreads = 128;

// Block-wide reductions over kMergeThreads threads; every thread gets the result.
template <class Op>
__device__ float block_reduce(float x, Op op, float* scratch) {
#pragma unroll
  for (int o = 16; o >= 1; o /= 2) x = op(x, __shfl_xor_sync(0xffffffffu, x, o));
  const int warp = static_cast<int>(threadIdx.x) / 32;
  if (threadIdx.x % 32 == 0) scratch[warp] = x;
  __syncthreads();
  float r = scratch[0];
  for (int w = 1; w < kMergeThreads / 32; ++w) r = op(r, scratch[w]);
  __syncthreads();  // scratch may be reused
  return r;
}

// Merges the v2 partitions of one (sequence, query head): out = sum_p w_p * partial_p with
// w_p = 2^(lse_p - M) / sum_q 2^(lse_q - M).
template <class T>
__global__ void __launch_bounds__(kMergeThreads) decode_merge_kernel(const DecodeParams p) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  extern __shared__ __align__(16) float weight[];  // [merge_weight_floats(max_partitions)]
  __shared__ float scratch[kMergeThreads / 32];
  const int seq = static_cast<int>(blockIdx.x);  // decode_merge_grid: x = sequence, y = query head
  const int head = static_cast<int>(blockIdx.y);
  const int kv_len = p.kv_lens[seq];
  const int n = min((kv_len + p.partition_size - 1) / p.partition_size, p.max_partitions);
  const std::int64_t row0 = (static_cast<std::int64_t>(seq) * p.num_q_heads + head) * p.max_partitions;

  float mx = kNegInf;
  for (int i = static_cast<int>(threadIdx.x); i < n; i += kMergeThreads) {
    const float x = p.partial_lse[row0 + i];
    weight[i] = x;
    mx = fmaxf(mx, x);
  }
  mx = block_reduce(mx, [](float a, float b) { return fmaxf(a, b); }, scratch);
  float sum = 0.f;
  for (int i = static_cast<int>(threadIdx.x); i < n; i += kMergeThreads) {
    const float e = mx == kNegInf ? 0.f : fast_exp2(weight[i] - mx);
    weight[i] = e;
    sum += e;
  }
  sum = block_reduce(sum, [](float a, float b) { return a + b; }, scratch);  // also a barrier
  const float inv = sum > 0.f ? 1.f / sum : 0.f;
  T* out = static_cast<T*>(p.out) + seq * p.o_stride_token + head * p.o_stride_head;
  for (int d = static_cast<int>(threadIdx.x); d < p.head_dim; d += kMergeThreads) {
    float o = 0.f;
    for (int i = 0; i < n; ++i) o = fmaf(weight[i], p.partial_out[(row0 + i) * p.head_dim + d], o);
    out[d] = from_float<T>(o * inv);
  }
}

}  // namespace

namespace {
// The merge kernel's weights, rounded up to whole 16-byte vectors: the final loop reads the
// weights as float4 (ld.shared.v4.f32), and compute-sanitizer on an H200 reported a 12-byte
// read at the end of a weight array sized to exactly max_partitions floats.
std::size_t merge_weight_floats(std::int32_t max_partitions) {
  return (static_cast<std::size_t>(max_partitions) + 3) / 4 * 4;
}
}  // namespace

template <class T>
void launch_decode_merge(const DecodeParams& p, dim3 grid, cudaStream_t stream) {
  const std::size_t smem = sizeof(float) * merge_weight_floats(p.max_partitions);
  decode_merge_kernel<T><<<grid, kMergeThreads, smem, stream>>>(p);
}

template void launch_decode_merge<float>(const DecodeParams&, dim3, cudaStream_t);
template void launch_decode_merge<__half>(const DecodeParams&, dim3, cudaStream_t);
template void launch_decode_merge<__nv_bfloat16>(const DecodeParams&, dim3, cudaStream_t);

}  // namespace detail

using detail::require;

DecodeDeviceCaps decode_device_caps(DType dtype, std::int32_t head_dim, std::int32_t group_size) {
  const char* fn = "decode_device_caps";
  require(group_size >= 1, fn, [&] { return "group_size must be >= 1, got " + std::to_string(group_size); });
  int device = 0;
  check_cuda(cudaGetDevice(&device), fn, "cudaGetDevice");
  DecodeDeviceCaps caps;
  check_cuda(cudaDeviceGetAttribute(&caps.num_sms, cudaDevAttrMultiProcessorCount, device), fn,
                     "cudaDeviceGetAttribute(multiprocessor count)");
  const DecodeKernel kernel = decode_kernel_for(dtype, group_size);
  const std::int32_t heads = decode_heads_per_cta(kernel, group_size);
  int per_sm = -1;
  detail::dispatch_dtype(dtype, fn, [&](auto tag) {
    using T = typename decltype(tag)::type;
    detail::dispatch_head_dim(head_dim, fn, [&](auto d) {
      per_sm = detail::decode_ctas_per_sm<T, decltype(d)::value>(kernel, heads);
    });
  });
  require(per_sm >= 1, fn, "cudaOccupancyMaxActiveBlocksPerMultiprocessor failed or reported 0 CTAs per SM");
  caps.ctas_per_sm = per_sm;
  return caps;
}

DecodeDeviceCaps decode_device_caps(const DecodeProblem& problem) {
  require(problem.num_kv_heads >= 1, "decode_device_caps", "num_kv_heads must be >= 1");
  return decode_device_caps(problem.dtype, problem.head_dim, problem.num_q_heads / problem.num_kv_heads);
}

DecodeProblem decode_problem(const PagedAttentionArgs& args, std::span<const std::int32_t> kv_lens_host) {
  const AttentionShape s = check_paged_attention_args(args, "decode_problem", Backend::kCuda);
  DecodeProblem p;
  p.num_seqs = s.num_seqs;
  p.num_q_heads = s.num_q_heads;
  p.num_kv_heads = s.num_kv_heads;
  p.head_dim = s.head_dim;
  p.dtype = s.dtype;
  p.kv_lens = kv_lens_host;
  return p;
}

void paged_decode(const PagedAttentionArgs& a, const DecodePlan& plan, void* workspace,
                  std::size_t workspace_bytes, CudaStream stream) {
  const char* fn = "paged_decode";
  const AttentionShape s = check_paged_attention_args(a, fn, Backend::kCuda);
  require(s.decode, fn, "query_starts must be empty for decode (one query per sequence); use paged_prefill");
  const bool half = s.dtype == DType::kFloat16 || s.dtype == DType::kBFloat16;
  require(plan.kernel == DecodeKernel::kCudaCores || half, fn,
          "plan asks for the tensor-core decode kernel, which takes f16 or bf16 (plan made for other arguments?)");
  const std::int32_t heads = decode_heads_per_cta(plan.kernel, s.group_size());
  const std::int32_t head_groups = (s.group_size() + heads - 1) / heads;
  require(plan.heads_per_cta == heads && plan.head_groups == head_groups, fn,
          [&] { return "plan has " + std::to_string(plan.head_groups) + " head groups of " +
              std::to_string(plan.heads_per_cta) + "; these arguments need " + std::to_string(head_groups) +
              " of " + std::to_string(heads) + " (plan made for other arguments?)"; });
  const bool v2 = plan.algo == DecodeAlgo::kV2;
  if (v2) {
    require(plan.partition_size >= 1 && plan.max_partitions >= 1 &&
                plan.max_partitions <= limits::kMaxDecodePartitions,
            fn, [&] { return "v2 plan needs partition_size >= 1 and max_partitions in [1, " +
                    std::to_string(limits::kMaxDecodePartitions) + "]"; });
    const DecodeWorkspaceLayout ws =
        decode_workspace_layout(s.num_seqs, s.num_q_heads, plan.max_partitions, s.head_dim);
    require(plan.partial_out_offset == ws.partial_out_offset && plan.partial_lse_offset == ws.partial_lse_offset, fn,
            "plan's workspace layout does not match these arguments (plan made for other arguments?)");
    require(workspace != nullptr && workspace_bytes >= ws.bytes, fn,
            [&] { return "v2 needs a workspace of " + std::to_string(ws.bytes) + " bytes, got " +
                std::to_string(workspace_bytes); });
    require(reinterpret_cast<std::uintptr_t>(workspace) % 256 == 0, fn, "workspace must be 256-byte aligned");
  }
  if (s.num_seqs == 0) return;
  // Both grids are checked before the first launch: a merge grid that does not fit must not
  // surface only after the partitions were written.
  DecodePlan shape = plan;
  shape.head_groups = head_groups;
  const LaunchGrid main_grid = decode_kernel_grid(shape, s.num_seqs, s.num_kv_heads);
  const LaunchGrid merge_grid = decode_merge_grid(s.num_seqs, s.num_q_heads);
  check_launch_grid(main_grid, fn, "paged_decode_kernel");
  if (v2) check_launch_grid(merge_grid, fn, "decode_merge_kernel");

  detail::DecodeParams p;
  static_cast<detail::PagedAttentionParams&>(p) = detail::make_attention_params(a, s, fn);
  p.num_seqs = s.num_seqs;
  p.kernel = plan.kernel;
  p.heads_per_cta = heads;
  p.head_groups = head_groups;
  p.head_dim = s.head_dim;
  p.partition_size = v2 ? plan.partition_size : 0;
  p.max_partitions = v2 ? plan.max_partitions : 1;
  if (v2) {
    p.partial_out = reinterpret_cast<float*>(static_cast<char*>(workspace) + plan.partial_out_offset);
    p.partial_lse = reinterpret_cast<float*>(static_cast<char*>(workspace) + plan.partial_lse_offset);
  }
  if (plan.kernel == DecodeKernel::kTensorCores) {
    int device = 0, max_optin = 0;
    check_cuda(cudaGetDevice(&device), fn, "cudaGetDevice");
    check_cuda(cudaDeviceGetAttribute(&max_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), fn,
               "cudaDeviceGetAttribute(max shared memory per block, opt-in)");
    const std::size_t need = decode_mma_smem_bytes(s.head_dim);
    require(need <= static_cast<std::size_t>(max_optin), fn, [&] {
      return "the tensor-core decode kernel needs " + std::to_string(need) + " bytes of shared memory at head_dim " +
             std::to_string(s.head_dim) + "; this device allows " + std::to_string(max_optin) + " per CTA";
    });
  }
  const char* kernel = plan.kernel == DecodeKernel::kTensorCores
                           ? (v2 ? "paged_decode_mma_kernel (v2 partitions)" : "paged_decode_mma_kernel (v1)")
                           : (v2 ? "paged_decode_kernel (v2 partitions)" : "paged_decode_kernel (v1)");
  cudaStream_t st = stream;
  detail::dispatch_dtype(s.dtype, fn, [&](auto tag) {
    using T = typename decltype(tag)::type;
    cudaError_t attribute = cudaSuccess;
    detail::dispatch_head_dim(s.head_dim, fn, [&](auto d) {
      attribute = detail::launch_decode_kernel<T, decltype(d)::value>(p, to_dim3(main_grid), st);
    });
    check_cuda(attribute, fn, "cudaFuncSetAttribute(shared memory) before the decode launch");
    check_launch(fn, kernel);
    if (v2) {
      detail::launch_decode_merge<T>(p, to_dim3(merge_grid), st);
      check_launch(fn, "decode_merge_kernel");
    }
  });
}

}  // namespace pagesim::kernels

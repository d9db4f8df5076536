// Paged prefill attention for fp32 on CUDA cores — included only by prefill_f32.cu.
//
// Same work split as the tensor-core kernel (one CTA = sequence x KV head x kRows packed query
// rows) with 4 warps and 32 x 32 tiles: Q, K and V tiles in shared memory with rows padded
// to an odd word stride, four threads per query row. Each thread scores 8 keys (full fp32
// dot products), the row's four threads agree on the base-2 online-softmax state with two
// shuffles, write P to shared memory, and each accumulates head_dim / 4 output columns.
// Chosen for exactness (fp32 FMA, no tf32) and simplicity, not speed.
#pragma once

#include <cuda_runtime.h>

#include <limits>

#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/prefill_cta.cuh"
#include "kernels/cuda/prefill_params.h"
#include "kernels/prefill_plan.h"

namespace pagesim::kernels::detail {

template <int D>
struct PrefillSimtTraits {
  static constexpr PrefillTile kTile = prefill_tile(DType::kFloat32, D);
  static constexpr int kThreads = kTile.warps * 32;
  static constexpr int kRows = kTile.rows;
  static constexpr int kKeys = kTile.keys;
  static constexpr int kStride = D + kTile.row_pad;
  static constexpr int kThreadsPerRow = kThreads / kRows;
  static constexpr int kKeysPerThread = kKeys / kThreadsPerRow;
  static constexpr int kColsPerThread = D / kThreadsPerRow;
  static constexpr std::size_t kSmemBytes = prefill_smem_bytes(DType::kFloat32, D);

  static_assert(!kTile.tensor_cores && kTile.stages == 1, "single-buffered CUDA-core tiles");
  static_assert(kThreadsPerRow == 4, "a row's threads are one quad of a warp (two xor-shuffles)");
  static_assert(kKeys % kThreadsPerRow == 0 && D % kThreadsPerRow == 0, "even split");
  static_assert(kStride % 2 == 1, "odd word stride: conflict-free column walks");
  static_assert(kSmemBytes == sizeof(float) * (kStride * (kRows + 2 * kKeys) + kRows * (kKeys + 1)),
                "smem layout");
};

template <int D>
__global__ void __launch_bounds__(PrefillSimtTraits<D>::kThreads)
    paged_prefill_simt_kernel(const PrefillParams p) {
  using Tr = PrefillSimtTraits<D>;
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  extern __shared__ float smem[];
  float* sQ = smem;                             // [kRows][kStride], pre-scaled to base 2
  float* sK = sQ + Tr::kRows * Tr::kStride;     // [kKeys][kStride]
  float* sV = sK + Tr::kKeys * Tr::kStride;     // [kKeys][kStride]
  float* sP = sV + Tr::kKeys * Tr::kStride;     // [kRows][kKeys + 1]

  PrefillCta cta;
  if (!locate_prefill_cta<Tr::kRows, Tr::kKeys>(p, cta)) return;  // uniform across the CTA

  const int tid = static_cast<int>(threadIdx.x);
  const float* kc = static_cast<const float*>(p.k_cache);
  const float* vc = static_cast<const float*>(p.v_cache);
  for (int i = tid; i < Tr::kRows * D; i += Tr::kThreads) {
    const int row = i / D;
    const int d = i % D;
    const int r = cta.r0 + row;
    sQ[row * Tr::kStride + d] = r < cta.rows_total ? cta.query_row<float>(p, r)[d] * p.scale_log2 : 0.f;
  }

  const int row = tid / Tr::kThreadsPerRow;
  const int sub = tid % Tr::kThreadsPerRow;
  const int r = cta.r0 + row;
  const bool alibi = p.alibi_slopes != nullptr;
  const PrefillRowScore score = cta.row_score(p, r, alibi);

  float acc[Tr::kColsPerThread];
#pragma unroll
  for (int k = 0; k < Tr::kColsPerThread; ++k) acc[k] = 0.f;
  float m = kNegInf;
  float l = 0.f;  // this thread's share of the row sum

  for (int j = cta.j_begin; j < cta.n_tiles; ++j) {
    __syncthreads();  // previous tile fully consumed (and, for the first, Q stored)
    for (int i = tid; i < Tr::kKeys * D; i += Tr::kThreads) {
      const int kr = i / D;
      const int d = i % D;
      const int key = j * Tr::kKeys + kr;
      float kv = 0.f, vv = 0.f;
      if (cta.loads_key(key)) {
        const std::int64_t off = cta.key_offset(p, key);
        kv = kc[off + d];
        vv = vc[off + d];
      }
      sK[kr * Tr::kStride + d] = kv;
      sV[kr * Tr::kStride + d] = vv;
    }
    __syncthreads();

    float s[Tr::kKeysPerThread];
    float mx = m;
#pragma unroll
    for (int i = 0; i < Tr::kKeysPerThread; ++i) {
      const int kr = sub + Tr::kThreadsPerRow * i;
      float dot = 0.f;
#pragma unroll 8
      for (int d = 0; d < D; ++d) dot = fmaf(sQ[row * Tr::kStride + d], sK[kr * Tr::kStride + d], dot);
      const int key = j * Tr::kKeys + kr;
      s[i] = score.apply(dot, key, alibi, true);
      mx = fmaxf(mx, s[i]);
    }
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
    const float m_use = mx == kNegInf ? 0.f : mx;
    const float alpha = fast_exp2(m - m_use);
    m = mx;
    l *= alpha;
#pragma unroll
    for (int k = 0; k < Tr::kColsPerThread; ++k) acc[k] *= alpha;
#pragma unroll
    for (int i = 0; i < Tr::kKeysPerThread; ++i) {
      const float pr = fast_exp2(s[i] - m_use);
      l += pr;
      sP[row * (Tr::kKeys + 1) + sub + Tr::kThreadsPerRow * i] = pr;
    }
    __syncwarp();  // the row's four threads share a warp
#pragma unroll 4
    for (int kr = 0; kr < Tr::kKeys; ++kr) {
      const float pr = sP[row * (Tr::kKeys + 1) + kr];
#pragma unroll
      for (int k = 0; k < Tr::kColsPerThread; ++k) {
        acc[k] = fmaf(pr, sV[kr * Tr::kStride + sub + Tr::kThreadsPerRow * k], acc[k]);
      }
    }
  }

  l += __shfl_xor_sync(0xffffffffu, l, 1);
  l += __shfl_xor_sync(0xffffffffu, l, 2);
  if (r >= cta.rows_total) return;
  const float inv = l > 0.f ? 1.f / l : 0.f;
  float* dst = cta.out_row<float>(p, r);
#pragma unroll
  for (int k = 0; k < Tr::kColsPerThread; ++k) dst[sub + Tr::kThreadsPerRow * k] = acc[k] * inv;
}

template <int D>
cudaError_t launch_prefill_simt(const PrefillParams& p, dim3 grid, std::size_t smem, cudaStream_t stream) {
  const cudaError_t status = cudaFuncSetAttribute(paged_prefill_simt_kernel<D>,
                                                  cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  if (status != cudaSuccess) return status;
  paged_prefill_simt_kernel<D><<<grid, PrefillSimtTraits<D>::kThreads, smem, stream>>>(p);
  return cudaSuccess;
}

#define PAGESIM_INSTANTIATE_PREFILL_SIMT(D) \
  template cudaError_t launch_prefill_simt<D>(const PrefillParams&, dim3, std::size_t, cudaStream_t);

}  // namespace pagesim::kernels::detail

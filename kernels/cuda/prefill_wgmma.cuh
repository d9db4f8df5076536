// Paged prefill attention with Hopper warpgroup MMA (wgmma, sm_90a) at head_dim 128, fp16 /
// bf16 — included only by prefill_{f16,bf16}.cu.
//
// One CTA = one sequence x one KV head x 128 packed query rows (row = token * group + head
// in group), as the mma.sync kernel (prefill_mma.cuh), so the grid, the tile order (late,
// heavy tiles first), the masks and ALiBi are the same. Two warpgroups own 64 rows each. Q
// and 128-key K/V tiles are copied with cp.async into 128-byte-swizzled shared memory
// (wgmma.cuh: 64-element column atoms of 128-byte rows), K/V double-buffered. Per key tile
// and warpgroup:
//  1. S = Q K^T: 8 wgmma m64n128k16, both operands read from shared memory (K-major);
//     warpgroup 1 issues after warpgroup 0 (ping-pong), so one's softmax overlaps the
//     other's product (+11% on an H200);
//  2. scale, mask and online softmax on the fp32 accumulators (each warp holds 16 rows in
//     mma.sync's accumulator layout), rescaling lazily as the mma.sync kernel does;
//  3. O += P V: 8 wgmma m64n128k16 with P rounded to T in registers (its accumulator layout
//     is the A-fragment layout) and V read from shared memory as an N-major operand.
// Loads of tile j + 1 run during tile j. Output is O / l in T.
#pragma once

#include <cuda_runtime.h>

#include <limits>

#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/prefill_cta.cuh"
#include "kernels/cuda/prefill_params.h"
#include "kernels/cuda/wgmma.cuh"
#include "kernels/prefill_plan.h"

namespace pagesim::kernels::detail {

template <class T>
struct PrefillWgmmaTraits {
  static constexpr PrefillTile kTile = prefill_wgmma_tile();
  static constexpr int kD = kPrefillWgmmaHeadDim;
  static constexpr int kThreads = kTile.warps * 32;
  static constexpr int kRows = kTile.rows;
  static constexpr int kKeys = kTile.keys;
  static constexpr int kAtoms = kD / 64;          // 64-element column atoms per row
  static constexpr int kChunks = kD / 8;          // 16-byte chunks per row
  static constexpr int kRowBytes = 128;           // bytes of one row of one atom
  static constexpr int kQBytes = kRows * kD * 2;
  static constexpr int kKvBytes = kKeys * kD * 2;  // one K or V tile
  static constexpr int kKSteps = kD / 16;          // k16 steps of S = Q K^T
  static constexpr int kPSteps = kKeys / 16;       // k16 steps of O += P V
  static constexpr int kNTiles = kKeys / 8;        // n8 column tiles of S
  static constexpr int kDTiles = kD / 8;           // n8 column tiles of O

  static_assert(sizeof(T) == 2, "wgmma f16/bf16 operands");
  static_assert(kTile.warps == 8 && kRows == 128, "two warpgroups of 64 rows (m64)");
  static_assert(kKeys == 128 && kD == 128, "the m64n128k16 shapes of wgmma.cuh");
  static_assert(kTile.stages == 2, "the pipeline below is double-buffered");
  static_assert((kRows * kChunks) % kThreads == 0 && (kKeys * kChunks) % kThreads == 0, "whole copy rounds");
  static_assert(prefill_wgmma_smem_bytes(kD) == 1024 + kQBytes + 2 * kTile.stages * kKvBytes, "smem layout");
};

template <class T>
__global__ void __launch_bounds__(PrefillWgmmaTraits<T>::kThreads, 1)
    paged_prefill_wgmma_kernel(const PrefillParams p) {
  using Tr = PrefillWgmmaTraits<T>;
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  // Swizzle atoms must start on 1024 bytes of the shared window: align up (1 KB reserved).
  unsigned char* smem = smem_raw + ((1024u - (smem_addr(smem_raw) & 1023u)) & 1023u);
  unsigned char* sQ = smem;
  unsigned char* sK = sQ + Tr::kQBytes;              // stages 0, 1
  unsigned char* sV = sK + 2 * Tr::kKvBytes;         // stages 0, 1

  PrefillCta cta;
  if (!locate_prefill_cta<Tr::kRows, Tr::kKeys>(p, cta)) return;  // uniform across the CTA

  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / 32;
  const int lane = tid % 32;
  const int wg = warp / 4;  // warpgroup: rows 64 wg .. 64 wg + 63 of the tile
  const T* kc = static_cast<const T*>(p.k_cache);
  const T* vc = static_cast<const T*>(p.v_cache);

  // Q tile (rows past the sequence are zero). Consecutive threads copy consecutive chunks.
#pragma unroll
  for (int x = 0; x < Tr::kRows * Tr::kChunks / Tr::kThreads; ++x) {
    const int i = tid + x * Tr::kThreads;
    const int row = i / Tr::kChunks;
    const int c = i % Tr::kChunks;
    const int r = cta.r0 + row;
    const bool valid = r < cta.rows_total;
    const T* src = valid ? cta.query_row<T>(p, r) + c * 8 : static_cast<const T*>(p.query);
    cp_async_16(sQ + sw128_offset(row, c, Tr::kRows), src, valid);
  }
  auto load_kv = [&](int j, int stage) {
    unsigned char* dk = sK + stage * Tr::kKvBytes;
    unsigned char* dv = sV + stage * Tr::kKvBytes;
#pragma unroll
    for (int x = 0; x < Tr::kKeys * Tr::kChunks / Tr::kThreads; ++x) {
      const int i = tid + x * Tr::kThreads;
      const int row = i / Tr::kChunks;
      const int c = i % Tr::kChunks;
      const int key = j * Tr::kKeys + row;
      const bool valid = cta.loads_key(key);
      const std::int64_t off = valid ? cta.key_offset(p, key) : 0;
      const std::uint32_t o = sw128_offset(row, c, Tr::kKeys);
      cp_async_16(dk + o, kc + off + c * 8, valid);
      cp_async_16(dv + o, vc + off + c * 8, valid);
    }
  };
  load_kv(cta.j_begin, 0);
  cp_async_commit();

  // This thread's rows: lane / 4 and lane / 4 + 8 of its warp's 16 (h = 0, 1).
  auto row_of = [&](int h) { return cta.r0 + wg * 64 + (warp % 4) * 16 + lane / 4 + 8 * h; };

  float o[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) o[i] = 0.f;
  float m[2] = {kNegInf, kNegInf};
  float l[2] = {0.f, 0.f};

  const std::uint32_t q_base = smem_addr(sQ) + wg * 64 * Tr::kRowBytes;
  for (int j = cta.j_begin; j < cta.n_tiles; ++j) {
    const int stage = (j - cta.j_begin) % 2;
    if (j + 1 < cta.n_tiles) {
      load_kv(j + 1, 1 - stage);
      cp_async_commit();
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    fence_proxy_async_shared();  // this thread's copies, visible to wgmma after the barrier
    __syncthreads();
    const std::uint32_t k_base = smem_addr(sK + stage * Tr::kKvBytes);
    const std::uint32_t v_base = smem_addr(sV + stage * Tr::kKvBytes);

    // 1. S = Q K^T. Warpgroup 1 issues after warpgroup 0 (named barrier 1), so the tensor
    // cores run 0's product first and 0's softmax overlaps 1's product (ping-pong).
    float s[64];
    if (wg == 1) named_barrier_sync(1, Tr::kThreads);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < Tr::kKSteps; ++kk) {
      const std::uint32_t step = (kk % 4) * 32;  // k16 inside the 64-element atom
      const std::uint64_t a = wgmma_desc_sw128(q_base + (kk / 4) * Tr::kRows * Tr::kRowBytes + step, 16, 1024);
      const std::uint64_t b = wgmma_desc_sw128(k_base + (kk / 4) * Tr::kKeys * Tr::kRowBytes + step, 16, 1024);
      wgmma_m64n128k16_ss<T>(s, a, b, kk > 0);
    }
    wgmma_commit();
    if (wg == 0) named_barrier_arrive(1, Tr::kThreads);
    wgmma_wait<0>(s);

    // 2. Scale to base 2 (folded into the exponent's FMA on tiles without ALiBi or mask),
    // ALiBi, mask (causal: only where the tile crosses the diagonal).
    const int key0 = j * Tr::kKeys;
    const bool need_mask = cta.windowed || key0 + Tr::kKeys - 1 > cta.diag;
    const bool alibi = p.alibi_slopes != nullptr;
    float scale = p.scale_log2;  // applied to s by the exponent; 1 once s is scaled in place
    if (alibi || need_mask || !(scale > 0.f)) {  // (a max commutes only with a positive scale)
#pragma unroll
      for (int i = 0; i < 64; ++i) s[i] *= scale;
      scale = 1.f;
    }
    if (alibi || need_mask) {
      PrefillRowScore row[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) row[h] = cta.row_score(p, row_of(h), alibi);
#pragma unroll
      for (int nt = 0; nt < Tr::kNTiles; ++nt) {
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          const int key = key0 + nt * 8 + (lane % 4) * 2 + (c % 2);
          s[nt * 4 + c] = row[c / 2].apply(s[nt * 4 + c], key, alibi, need_mask);
        }
      }
    }
    // Online softmax with lazy rescaling (as prefill_mma.cuh: m moves only when a row of the
    // warp grows by more than 2^8, so P <= 256 stays inside fp16).
    constexpr float kRescaleSlack = 8.f;
    float tile_max[2];
    bool grow = false;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float mx = kNegInf;
#pragma unroll
      for (int nt = 0; nt < Tr::kNTiles; ++nt) mx = fmaxf(mx, fmaxf(s[nt * 4 + 2 * h], s[nt * 4 + 2 * h + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      mx *= scale;  // scale > 0 here: the max of the scaled scores
      tile_max[h] = mx;
      grow = grow || mx > m[h] + kRescaleSlack;
    }
    if (__any_sync(0xffffffffu, grow)) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float mx = fmaxf(m[h], tile_max[h]);
        const float alpha = fast_exp2(m[h] - (mx == kNegInf ? 0.f : mx));
        m[h] = mx;
        l[h] *= alpha;
#pragma unroll
        for (int dt = 0; dt < Tr::kDTiles; ++dt) {
          o[dt * 4 + 2 * h] *= alpha;
          o[dt * 4 + 2 * h + 1] *= alpha;
        }
      }
    }
    std::uint32_t pa[Tr::kPSteps][4];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float m_use = m[h] == kNegInf ? 0.f : m[h];
#pragma unroll
      for (int nt = 0; nt < Tr::kNTiles; ++nt) {
        s[nt * 4 + 2 * h] = fast_exp2(fmaf(s[nt * 4 + 2 * h], scale, -m_use));
        s[nt * 4 + 2 * h + 1] = fast_exp2(fmaf(s[nt * 4 + 2 * h + 1], scale, -m_use));
        l[h] += s[nt * 4 + 2 * h] + s[nt * 4 + 2 * h + 1];
      }
    }
#pragma unroll
    for (int kt = 0; kt < Tr::kPSteps; ++kt) {
      pa[kt][0] = pack2<T>(s[8 * kt + 0], s[8 * kt + 1]);
      pa[kt][1] = pack2<T>(s[8 * kt + 2], s[8 * kt + 3]);
      pa[kt][2] = pack2<T>(s[8 * kt + 4], s[8 * kt + 5]);
      pa[kt][3] = pack2<T>(s[8 * kt + 6], s[8 * kt + 7]);
    }

    // 3. O += P V (V: rows are keys, N-major; column atoms kKeys rows apart).
    wgmma_fence();
#pragma unroll
    for (int kt = 0; kt < Tr::kPSteps; ++kt) {
      const std::uint64_t b =
          wgmma_desc_sw128(v_base + kt * 16 * Tr::kRowBytes, Tr::kKeys * Tr::kRowBytes, 8 * Tr::kRowBytes);
      wgmma_m64n128k16_rs_tb<T>(o, pa[kt], b);
    }
    wgmma_commit();
    wgmma_wait<0>(o);
    __syncthreads();  // this stage is refilled next iteration
  }
  cp_async_wait<0>();  // nothing in flight at exit, even when no key tile ran

  // Epilogue: complete row sums across the quad, normalise, store.
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float lsum = l[h];
    lsum += __shfl_xor_sync(0xffffffffu, lsum, 1);
    lsum += __shfl_xor_sync(0xffffffffu, lsum, 2);
    const int r = row_of(h);
    if (r >= cta.rows_total) continue;
    const float inv = lsum > 0.f ? 1.f / lsum : 0.f;
    T* dst = cta.out_row<T>(p, r) + (lane % 4) * 2;
#pragma unroll
    for (int dt = 0; dt < Tr::kDTiles; ++dt) {
      *reinterpret_cast<uint32_t*>(dst + dt * 8) = pack2<T>(o[dt * 4 + 2 * h] * inv, o[dt * 4 + 2 * h + 1] * inv);
    }
  }
}

template <class T>
cudaError_t launch_prefill_wgmma(const PrefillParams& p, dim3 grid, std::size_t smem, cudaStream_t stream) {
  using Tr = PrefillWgmmaTraits<T>;
  const cudaError_t status = cudaFuncSetAttribute(paged_prefill_wgmma_kernel<T>,
                                                  cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  if (status != cudaSuccess) return status;
  paged_prefill_wgmma_kernel<T><<<grid, Tr::kThreads, smem, stream>>>(p);
  return cudaSuccess;
}

#define PAGESIM_INSTANTIATE_PREFILL_WGMMA(T) \
  template cudaError_t launch_prefill_wgmma<T>(const PrefillParams&, dim3, std::size_t, cudaStream_t);

}  // namespace pagesim::kernels::detail

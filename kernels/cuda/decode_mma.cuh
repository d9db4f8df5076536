// Paged decode attention on tensor cores (f16 / bf16, v1 and v2 partitions) for GQA/MQA
// groups — included only by the decode_{f16,bf16}.cu instantiation files.
//
// Why: on CUDA cores every key element is multiplied into each query head of the group in
// fp32 and each score is reduced across lanes, so a group of 4 costs about 4x the
// instructions per KV byte and decode stops being bandwidth-bound (57% of copy on an H200,
// kernels-h200.md). Here the group's query heads are the 16 rows of an mma.sync m16n8k16 tile
// (rows past the group are zero), as in the prefill kernel with one query token: a key costs
// the same whatever the group, and the tensor cores have headroom to spare.
//
// One CTA = one sequence x one KV head x up to 16 query heads x one range of tokens (v1: all;
// v2: one partition), as the CUDA-core kernel. The range is cut into tiles of kKeys tokens;
// warp w takes tiles w, w + kWarps, ... and streams them through its own kStages-deep
// cp.async pipeline (no CTA barrier in the loop). Keys past the range end are zero-filled and
// masked, never read; keys before the mask's first visible key are never in the range. Per
// tile: S = Q K^T (Q fragments in registers), base-2 online softmax per row on the fp32
// accumulators, P rounded to T as the A operand of O += P V. At the end the warps' states
// are merged through shared memory (weights 2^(m_w - M) / L), and the first `nheads` rows are
// written: the output (v1) or the fp32 partials and their LSE (v2; l = 0 gives -inf).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <limits>

#include "kernels/cuda/decode_params.h"
#include "kernels/cuda/device_common.cuh"
#include "kernels/decode_plan.h"

namespace pagesim::kernels::detail {

template <class T, int D>
struct DecodeMmaTraits {
  static constexpr DecodeMmaTile kTile = decode_mma_tile(D);
  static constexpr int kWarps = kTile.warps;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kRows = kTile.heads_per_cta;
  static constexpr int kKeys = kTile.keys;
  static constexpr int kStages = kTile.stages;
  static constexpr int kStride = D + kTile.row_pad;  // shared-memory row stride, elements
  static constexpr int kKSteps = D / 16;             // k-steps of S = Q K^T
  static constexpr int kDTiles = D / 8;              // n8 tiles of O
  static constexpr int kChunks = D / 8;              // 16-byte chunks per row
  static constexpr int kStageElems = 2 * kKeys * kStride;  // one stage: K rows, then V rows
  static constexpr std::size_t kSmemBytes = decode_mma_smem_bytes(D);
  // The merge reuses the pipeline's memory: per warp, O [kRows][D] and m, l [kRows] (fp32);
  // then the weights [kWarps][kRows] and LSE [kRows].
  static constexpr std::size_t kMergeBytes =
      sizeof(float) * (static_cast<std::size_t>(kWarps) * kRows * (D + 2) + kWarps * kRows + kRows);

  static_assert(sizeof(T) == 2, "mma.sync m16n8k16 takes 16-bit operands");
  static_assert(kRows == 16, "the group's heads are one m16 row tile");
  static_assert(kKeys == 16, "a tile is one k16 step of O += P V (two n8 tiles of S)");
  static_assert(D % 16 == 0 && kDTiles % 2 == 0, "x4 ldmatrix loads two n8 tiles at once");
  static_assert(((kStride * sizeof(T)) / 16) % 2 == 1, "odd 16-byte row stride: conflict-free ldmatrix");
  static_assert(kStages >= 2, "at least one tile in flight while one is computed");
  static_assert(kSmemBytes == sizeof(T) * kWarps * kStages * kStageElems, "smem layout");
  static_assert(kMergeBytes <= kSmemBytes, "the merge fits in the pipeline's memory");
};

template <class T, int D>
__global__ void __launch_bounds__(DecodeMmaTraits<T, D>::kThreads)
    paged_decode_mma_kernel(const DecodeParams p) {
  using Tr = DecodeMmaTraits<T, D>;
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  extern __shared__ __align__(16) unsigned char smem_raw[];

  const DecodeCtaWork w = decode_cta_work(p, Tr::kRows);
  if (w.past_end) return;
  const int seq = w.seq, kv_head = w.kv_head, partition = w.partition, head0 = w.head0, nheads = w.nheads;
  const int tok_begin = w.tok_begin, tok_end = w.tok_end, query_pos = w.query_pos;
  const int n_tiles = tok_end > tok_begin ? (tok_end - tok_begin + Tr::kKeys - 1) / Tr::kKeys : 0;

  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  T* stages = reinterpret_cast<T*>(smem_raw) + warp * Tr::kStages * Tr::kStageElems;
  const T* kc = static_cast<const T*>(p.k_cache);
  const T* vc = static_cast<const T*>(p.v_cache);

  // Loads this warp's i-th tile into stage i % kStages: lane j < kKeys finds key j's offset,
  // every lane then copies its 16-byte chunks of K and V.
  auto load_tile = [&](int i) {
    const int key0 = tok_begin + (warp + i * Tr::kWarps) * Tr::kKeys;
    const int my_key = key0 + lane % Tr::kKeys;
    const std::int64_t my_off =
        my_key < tok_end ? token_offset(p.geo, p.table, seq, my_key, kv_head, p.block_shift) : 0;
    T* dk = stages + (i % Tr::kStages) * Tr::kStageElems;
    T* dv = dk + Tr::kKeys * Tr::kStride;
#pragma unroll
    for (int x = 0; x < Tr::kKeys * Tr::kChunks / 32; ++x) {
      const int idx = lane + 32 * x;
      const int row = idx / Tr::kChunks;
      const int c = idx % Tr::kChunks;
      const std::int64_t off = __shfl_sync(0xffffffffu, my_off, row);
      const bool valid = key0 + row < tok_end;
      cp_async_16(dk + row * Tr::kStride + c * 8, kc + off + c * 8, valid);
      cp_async_16(dv + row * Tr::kStride + c * 8, vc + off + c * 8, valid);
    }
  };
  const int my_tiles = n_tiles > warp ? (n_tiles - warp + Tr::kWarps - 1) / Tr::kWarps : 0;
#pragma unroll
  for (int i = 0; i < Tr::kStages - 1; ++i) {
    if (i < my_tiles) load_tile(i);
    cp_async_commit();  // one group per tile slot, empty or not: wait_group counts stay fixed
  }

  // Q fragments (A operand, unscaled) straight from global memory; rows past the CTA's heads
  // are zero. Row r of the tile is query head head0 + r.
  uint32_t qf[Tr::kKSteps][4];
  {
    const T* qbase = static_cast<const T*>(p.query) + seq * p.q_stride_token;
#pragma unroll
    for (int x = 0; x < 4; ++x) {
      const int r = lane / 4 + 8 * (x % 2);
      const T* row = qbase + (head0 + r) * p.q_stride_head + (lane % 4) * 2 + 8 * (x / 2);
#pragma unroll
      for (int kk = 0; kk < Tr::kKSteps; ++kk) {
        qf[kk][x] = r < nheads ? *reinterpret_cast<const uint32_t*>(row + kk * 16) : 0u;
      }
    }
  }
  // The two rows this thread holds in accumulator layout: lane / 4 and lane / 4 + 8.
  float slope[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = lane / 4 + 8 * h;
    slope[h] = (p.alibi_slopes != nullptr && r < nheads) ? p.alibi_slopes[head0 + r] * kLog2e : 0.f;
  }

  float o[Tr::kDTiles][4];
#pragma unroll
  for (int i = 0; i < Tr::kDTiles; ++i) o[i][0] = o[i][1] = o[i][2] = o[i][3] = 0.f;
  float m[2] = {kNegInf, kNegInf};
  float l[2] = {0.f, 0.f};
  const bool alibi = p.alibi_slopes != nullptr;

  for (int i = 0; i < my_tiles; ++i) {
    if (i + Tr::kStages - 1 < my_tiles) load_tile(i + Tr::kStages - 1);
    cp_async_commit();
    cp_async_wait<Tr::kStages - 1>();  // tile i has landed (this lane's copies)
    __syncwarp();                      // ... and every lane's
    const T* k_tile = stages + (i % Tr::kStages) * Tr::kStageElems;
    const T* v_tile = k_tile + Tr::kKeys * Tr::kStride;
    const int key0 = tok_begin + (warp + i * Tr::kWarps) * Tr::kKeys;

    // S = Q K^T (fp32): n8 tile 0 = keys 0-7, tile 1 = keys 8-15.
    float s[2][4] = {{0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f, 0.f}};
    const T* k_frag = k_tile + (lane % 8 + (lane / 16) * 8) * Tr::kStride + ((lane / 8) % 2) * 8;
#pragma unroll
    for (int kk = 0; kk < Tr::kKSteps; ++kk) {
      uint32_t b[4];
      ldmatrix_x4(b, k_frag + kk * 16);
      mma_16816<T>(s[0], qf[kk], b[0], b[1]);
      mma_16816<T>(s[1], qf[kk], b[2], b[3]);
    }
    // Base 2, ALiBi, keys past the range end masked (the last tile only).
    const bool tail = key0 + Tr::kKeys > tok_end;
#pragma unroll
    for (int nt = 0; nt < 2; ++nt) {
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const int key = key0 + nt * 8 + (lane % 4) * 2 + (c % 2);
        float x = s[nt][c] * p.scale_log2;
        if (alibi) x += slope[c / 2] * static_cast<float>(key - query_pos);
        if (tail && key >= tok_end) x = kNegInf;
        s[nt][c] = x;
      }
    }
    // Online softmax per row; P overwrites S.
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float mx = fmaxf(m[h], fmaxf(fmaxf(s[0][2 * h], s[0][2 * h + 1]), fmaxf(s[1][2 * h], s[1][2 * h + 1])));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float m_use = mx == kNegInf ? 0.f : mx;
      const float alpha = fast_exp2(m[h] - m_use);
      m[h] = mx;
      l[h] *= alpha;
#pragma unroll
      for (int dt = 0; dt < Tr::kDTiles; ++dt) {
        o[dt][2 * h] *= alpha;
        o[dt][2 * h + 1] *= alpha;
      }
#pragma unroll
      for (int nt = 0; nt < 2; ++nt) {
        s[nt][2 * h] = fast_exp2(s[nt][2 * h] - m_use);
        s[nt][2 * h + 1] = fast_exp2(s[nt][2 * h + 1] - m_use);
        l[h] += s[nt][2 * h] + s[nt][2 * h + 1];
      }
    }
    // O += P V: the two n8 tiles of S in accumulator layout are the m16k16 A operand.
    const uint32_t a[4] = {pack2<T>(s[0][0], s[0][1]), pack2<T>(s[0][2], s[0][3]), pack2<T>(s[1][0], s[1][1]),
                           pack2<T>(s[1][2], s[1][3])};
    const T* v_frag = v_tile + (lane % 8 + ((lane / 8) % 2) * 8) * Tr::kStride + (lane / 16) * 8;
#pragma unroll
    for (int dp = 0; dp < Tr::kDTiles / 2; ++dp) {
      uint32_t b[4];
      ldmatrix_x4_trans(b, v_frag + dp * 16);
      mma_16816<T>(o[2 * dp], a, b[0], b[1]);
      mma_16816<T>(o[2 * dp + 1], a, b[2], b[3]);
    }
    __syncwarp();  // every lane is done with this stage before it is refilled
  }
  cp_async_wait<0>();  // nothing in flight at exit or before the merge reuses the memory

  // Row sums complete across the quad; then the warps' states meet in shared memory.
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    l[h] += __shfl_xor_sync(0xffffffffu, l[h], 1);
    l[h] += __shfl_xor_sync(0xffffffffu, l[h], 2);
  }
  __syncthreads();  // every warp is out of its pipeline
  float* sm_o = reinterpret_cast<float*>(smem_raw);           // [kWarps][kRows][D]
  float* sm_m = sm_o + Tr::kWarps * Tr::kRows * D;            // [kWarps][kRows]
  float* sm_l = sm_m + Tr::kWarps * Tr::kRows;                // [kWarps][kRows]
  float* sm_w = sm_l + Tr::kWarps * Tr::kRows;                // [kWarps][kRows]: weights
  float* sm_lse = sm_w + Tr::kWarps * Tr::kRows;              // [kRows]
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = lane / 4 + 8 * h;
    float* dst = sm_o + (warp * Tr::kRows + r) * D + (lane % 4) * 2;
#pragma unroll
    for (int dt = 0; dt < Tr::kDTiles; ++dt) {
      dst[dt * 8] = o[dt][2 * h];
      dst[dt * 8 + 1] = o[dt][2 * h + 1];
    }
    if (lane % 4 == 0) {
      sm_m[warp * Tr::kRows + r] = m[h];
      sm_l[warp * Tr::kRows + r] = l[h];
    }
  }
  __syncthreads();
  if (threadIdx.x < Tr::kRows) {
    const int r = static_cast<int>(threadIdx.x);
    float mx = kNegInf;
    for (int w = 0; w < Tr::kWarps; ++w) mx = fmaxf(mx, sm_m[w * Tr::kRows + r]);
    float sum = 0.f;
    for (int w = 0; w < Tr::kWarps; ++w) {
      sum += mx == kNegInf ? 0.f : sm_l[w * Tr::kRows + r] * fast_exp2(sm_m[w * Tr::kRows + r] - mx);
    }
    const float inv = sum > 0.f ? 1.f / sum : 0.f;
    for (int w = 0; w < Tr::kWarps; ++w) {
      sm_w[w * Tr::kRows + r] = sum > 0.f ? fast_exp2(sm_m[w * Tr::kRows + r] - mx) * inv : 0.f;
    }
    sm_lse[r] = sum > 0.f ? mx + __log2f(sum) : kNegInf;
  }
  __syncthreads();
  for (int idx = static_cast<int>(threadIdx.x); idx < nheads * D; idx += Tr::kThreads) {
    const int r = idx / D;
    const int d = idx % D;
    float out = 0.f;
#pragma unroll
    for (int w = 0; w < Tr::kWarps; ++w) out = fmaf(sm_w[w * Tr::kRows + r], sm_o[(w * Tr::kRows + r) * D + d], out);
    const int head = head0 + r;
    if (p.partition_size == 0) {
      static_cast<T*>(p.out)[seq * p.o_stride_token + head * p.o_stride_head + d] = from_float<T>(out);
    } else {
      const std::int64_t prow = (static_cast<std::int64_t>(seq) * p.num_q_heads + head) * p.max_partitions + partition;
      p.partial_out[prow * D + d] = out;
      if (d == 0) p.partial_lse[prow] = sm_lse[r];
    }
  }
}

// The kernel's shared-memory opt-in (above 48 KB) and carve-out; before every launch and
// occupancy query (cheap, and no per-process state to keep).
template <class T, int D>
cudaError_t prepare_decode_mma() {
  using Tr = DecodeMmaTraits<T, D>;
  cudaError_t e = cudaFuncSetAttribute(paged_decode_mma_kernel<T, D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(Tr::kSmemBytes));
  if (e != cudaSuccess) return e;
  return cudaFuncSetAttribute(paged_decode_mma_kernel<T, D>, cudaFuncAttributePreferredSharedMemoryCarveout,
                              cudaSharedmemCarveoutMaxShared);
}

template <class T, int D>
cudaError_t launch_decode_mma(const DecodeParams& p, dim3 grid, cudaStream_t stream) {
  using Tr = DecodeMmaTraits<T, D>;
  const cudaError_t status = prepare_decode_mma<T, D>();
  if (status != cudaSuccess) return status;
  paged_decode_mma_kernel<T, D><<<grid, Tr::kThreads, Tr::kSmemBytes, stream>>>(p);
  return cudaSuccess;
}

template <class T, int D>
int decode_mma_ctas_per_sm() {
  using Tr = DecodeMmaTraits<T, D>;
  int n = 0;
  if (prepare_decode_mma<T, D>() != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, paged_decode_mma_kernel<T, D>, Tr::kThreads,
                                                    Tr::kSmemBytes) != cudaSuccess) {
    return -1;
  }
  return n;
}

}  // namespace pagesim::kernels::detail

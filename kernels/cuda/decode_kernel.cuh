// Paged decode attention on CUDA cores (v1 and v2 partitions) — included only by the
// decode_<dtype>.cu instantiation files. Runs f32, and f16/bf16 groups below
// kDecodeMmaMinGroup (decode_plan.h); larger groups run decode_mma.cuh.
//
// One CTA = one sequence x one KV head x up to H (decode_simt_heads) query heads of its group x one range of
// tokens (v1: all of them; v2: one partition). Each warp is split into lane groups of kLanes
// lanes; a group owns one token row at a time, each lane one (or two) 16-byte vectors of it,
// and loads kTokensPerGroup consecutive tokens per iteration (K and V loads all in flight
// before first use). Scores are reduced across the group with xor-shuffles; each group keeps
// its own online-softmax state (m, l, acc) per head, in base 2; the groups are merged through
// shared memory at the end. Tokens >= the range end are never loaded (padding slots are
// never read), nor tokens before the mask's first visible key (a sliding window's or a
// chunk's start: their blocks may be freed), and a range with no token yields l = 0 (v1
// writes zeros, v2 a -inf LSE).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/cuda/decode_params.h"
#include "kernels/cuda/device_common.cuh"
#include "kernels/decode_plan.h"

namespace pagesim::kernels::detail {

template <class T, int D, int H>
struct DecodeTraits {
  static constexpr DecodeTile kTile = decode_tile(static_cast<std::int32_t>(sizeof(T)), D, H);
  static constexpr int kWarps = kTile.warps;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kHeads = kTile.heads_per_cta;
  static constexpr int kVec = kTile.vec_elems;
  static constexpr int kLanes = kTile.lanes_per_token;
  static constexpr int kVecsPerLane = kTile.vecs_per_lane;
  static constexpr int kVecsPerRow = D / kVec;
  static constexpr int kGroupsPerWarp = 32 / kLanes;
  static constexpr int kGroups = kWarps * kGroupsPerWarp;
  static constexpr int kTokensPerGroup = kTile.tokens_per_group;
  static constexpr int kTokensPerIteration = kTile.tokens_per_iteration;
  static constexpr int kElemsPerLane = kVecsPerLane * kVec;

  static_assert(kVec == kVecElems<T>, "16-byte vectors");
  static_assert(D % kVec == 0, "head_dim must be a whole number of 16-byte vectors");
  static_assert(kLanes >= 1 && kLanes <= 32 && (kLanes & (kLanes - 1)) == 0, "lane groups tile a warp");
  static_assert(kLanes * kVecsPerLane >= kVecsPerRow, "a lane group covers a row");
  static_assert(kLanes * (kVecsPerLane - 1) < kVecsPerRow, "no lane holds only padding vectors");
  static_assert(kTokensPerIteration == kGroups * kTokensPerGroup, "iteration = all groups' tokens");
  static_assert(kTokensPerGroup * kVecsPerLane == 8, "8 K + 8 V vectors in flight per lane");
  static_assert(sizeof(float) * kGroups * kHeads * D <= 32 * 1024, "merge buffer fits static smem");
  // CTAs per SM the registers must allow: four heads' queries, accumulators and scores need
  // about 168 registers (3 CTAs); one or two heads fit in 128 (4 CTAs).
  static constexpr int kMinCtasPerSm = H >= 4 ? 3 : 4;
};

template <class T, int D, int H>
__global__ void __launch_bounds__(DecodeTraits<T, D, H>::kThreads, DecodeTraits<T, D, H>::kMinCtasPerSm)
    paged_decode_kernel(const DecodeParams p) {
  using Tr = DecodeTraits<T, D, H>;
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();

  const DecodeCtaWork w = decode_cta_work(p, Tr::kHeads);
  if (w.past_end) return;
  const int seq = w.seq, kv_head = w.kv_head, partition = w.partition, head0 = w.head0, nheads = w.nheads;
  const int tok_begin = w.tok_begin, tok_end = w.tok_end, query_pos = w.query_pos;

  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int group = warp * Tr::kGroupsPerWarp + lane / Tr::kLanes;
  const int gl = lane % Tr::kLanes;

  // Queries of this CTA's heads, pre-scaled into base 2; ALiBi slopes likewise.
  float q[Tr::kHeads][Tr::kElemsPerLane];
  float slope[Tr::kHeads];
  const T* qbase = static_cast<const T*>(p.query) + seq * p.q_stride_token;
#pragma unroll
  for (int h = 0; h < Tr::kHeads; ++h) {
    slope[h] = (h < nheads && p.alibi_slopes != nullptr) ? p.alibi_slopes[head0 + h] * kLog2e : 0.f;
#pragma unroll
    for (int j = 0; j < Tr::kVecsPerLane; ++j) {
      const int c = gl + j * Tr::kLanes;
      float* qv = &q[h][j * Tr::kVec];
      if (h < nheads && c < Tr::kVecsPerRow) {
        vec_to_float<T>(load_vec(qbase + (head0 + h) * p.q_stride_head + c * Tr::kVec), qv);
#pragma unroll
        for (int e = 0; e < Tr::kVec; ++e) qv[e] *= p.scale_log2;
      } else {
#pragma unroll
        for (int e = 0; e < Tr::kVec; ++e) qv[e] = 0.f;
      }
    }
  }

  float m[Tr::kHeads], l[Tr::kHeads], acc[Tr::kHeads][Tr::kElemsPerLane];
#pragma unroll
  for (int h = 0; h < Tr::kHeads; ++h) {
    m[h] = kNegInf;
    l[h] = 0.f;
#pragma unroll
    for (int e = 0; e < Tr::kElemsPerLane; ++e) acc[h][e] = 0.f;
  }

  const T* kc = static_cast<const T*>(p.k_cache);
  const T* vc = static_cast<const T*>(p.v_cache);
  for (int base = tok_begin; base < tok_end; base += Tr::kTokensPerIteration) {
    const int t0 = base + group * Tr::kTokensPerGroup;
    uint4 kraw[Tr::kTokensPerGroup][Tr::kVecsPerLane];
    uint4 vraw[Tr::kTokensPerGroup][Tr::kVecsPerLane];
#pragma unroll
    for (int u = 0; u < Tr::kTokensPerGroup; ++u) {
      const int t = t0 + u;
      const bool valid = t < tok_end;
      const std::int64_t off = valid ? token_offset(p.geo, p.table, seq, t, kv_head, p.block_shift) : 0;
#pragma unroll
      for (int j = 0; j < Tr::kVecsPerLane; ++j) {
        const int c = gl + j * Tr::kLanes;
        if (valid && c < Tr::kVecsPerRow) {
          kraw[u][j] = load_vec(kc + off + c * Tr::kVec);
          vraw[u][j] = load_vec(vc + off + c * Tr::kVec);
        } else {
          kraw[u][j] = make_uint4(0, 0, 0, 0);
          vraw[u][j] = make_uint4(0, 0, 0, 0);
        }
      }
    }

    // Scores s[h][u] = q_h . k_u (base 2), complete in every lane of the group.
    float s[Tr::kHeads][Tr::kTokensPerGroup];
#pragma unroll
    for (int u = 0; u < Tr::kTokensPerGroup; ++u) {
      float kf[Tr::kElemsPerLane];
#pragma unroll
      for (int j = 0; j < Tr::kVecsPerLane; ++j) vec_to_float<T>(kraw[u][j], &kf[j * Tr::kVec]);
#pragma unroll
      for (int h = 0; h < Tr::kHeads; ++h) {
        float dot = 0.f;
#pragma unroll
        for (int e = 0; e < Tr::kElemsPerLane; ++e) dot = fmaf(q[h][e], kf[e], dot);
        s[h][u] = dot;
      }
    }
#pragma unroll
    for (int h = 0; h < Tr::kHeads; ++h) {
      if (h >= nheads) continue;  // uniform across the CTA
#pragma unroll
      for (int u = 0; u < Tr::kTokensPerGroup; ++u) {
#pragma unroll
        for (int o = Tr::kLanes / 2; o >= 1; o /= 2) s[h][u] += __shfl_xor_sync(0xffffffffu, s[h][u], o);
        const int t = t0 + u;
        s[h][u] = t < tok_end ? s[h][u] + slope[h] * static_cast<float>(t - query_pos) : kNegInf;
      }
    }

    // Online softmax per head: new max, rescale, accumulate p * v.
    float m_use[Tr::kHeads];
#pragma unroll
    for (int h = 0; h < Tr::kHeads; ++h) {
      if (h >= nheads) continue;
      float mx = m[h];
#pragma unroll
      for (int u = 0; u < Tr::kTokensPerGroup; ++u) mx = fmaxf(mx, s[h][u]);
      m_use[h] = mx == kNegInf ? 0.f : mx;
      const float alpha = fast_exp2(m[h] - m_use[h]);
      m[h] = mx;
      l[h] *= alpha;
#pragma unroll
      for (int e = 0; e < Tr::kElemsPerLane; ++e) acc[h][e] *= alpha;
    }
#pragma unroll
    for (int u = 0; u < Tr::kTokensPerGroup; ++u) {
      float vf[Tr::kElemsPerLane];
#pragma unroll
      for (int j = 0; j < Tr::kVecsPerLane; ++j) vec_to_float<T>(vraw[u][j], &vf[j * Tr::kVec]);
#pragma unroll
      for (int h = 0; h < Tr::kHeads; ++h) {
        if (h >= nheads) continue;
        const float pr = fast_exp2(s[h][u] - m_use[h]);
        l[h] += pr;
#pragma unroll
        for (int e = 0; e < Tr::kElemsPerLane; ++e) acc[h][e] = fmaf(pr, vf[e], acc[h][e]);
      }
    }
  }

  // Merge the groups' states: weight_g = 2^(m_g - M) / L per head, then sum acc.
  __shared__ float sm_m[Tr::kGroups][Tr::kHeads];
  __shared__ float sm_l[Tr::kGroups][Tr::kHeads];
  __shared__ __align__(16) float sm_acc[Tr::kGroups][Tr::kHeads][D];
  __shared__ float sm_lse[Tr::kHeads];
#pragma unroll
  for (int h = 0; h < Tr::kHeads; ++h) {
    if (gl == 0) {
      sm_m[group][h] = m[h];
      sm_l[group][h] = l[h];
    }
#pragma unroll
    for (int j = 0; j < Tr::kVecsPerLane; ++j) {
      const int c = gl + j * Tr::kLanes;
      if (c < Tr::kVecsPerRow) {
#pragma unroll
        for (int e = 0; e < Tr::kVec; ++e) sm_acc[group][h][c * Tr::kVec + e] = acc[h][j * Tr::kVec + e];
      }
    }
  }
  __syncthreads();
  if (threadIdx.x < Tr::kHeads) {
    const int h = static_cast<int>(threadIdx.x);
    float mx = kNegInf;
    for (int g = 0; g < Tr::kGroups; ++g) mx = fmaxf(mx, sm_m[g][h]);
    float sum = 0.f;
    for (int g = 0; g < Tr::kGroups; ++g) {
      sum += mx == kNegInf ? 0.f : sm_l[g][h] * fast_exp2(sm_m[g][h] - mx);
    }
    const float inv = sum > 0.f ? 1.f / sum : 0.f;
    for (int g = 0; g < Tr::kGroups; ++g) {
      sm_m[g][h] = sum > 0.f ? fast_exp2(sm_m[g][h] - mx) * inv : 0.f;  // now the weight
    }
    sm_lse[h] = sum > 0.f ? mx + __log2f(sum) : kNegInf;
  }
  __syncthreads();
  for (int idx = static_cast<int>(threadIdx.x); idx < nheads * D; idx += Tr::kThreads) {
    const int h = idx / D;
    const int d = idx % D;
    float o = 0.f;
#pragma unroll 4
    for (int g = 0; g < Tr::kGroups; ++g) o = fmaf(sm_m[g][h], sm_acc[g][h][d], o);
    const int head = head0 + h;
    if (p.partition_size == 0) {
      static_cast<T*>(p.out)[seq * p.o_stride_token + head * p.o_stride_head + d] = from_float<T>(o);
    } else {
      const std::int64_t row = (static_cast<std::int64_t>(seq) * p.num_q_heads + head) * p.max_partitions + partition;
      p.partial_out[row * D + d] = o;
      if (d == 0) p.partial_lse[row] = sm_lse[h];
    }
  }
}

// Calls f(std::integral_constant<int, H>{}) for the CTA's heads (decode_simt_heads).
template <class F>
void dispatch_simt_heads(int heads, F&& f) {
  if (heads == 1) f(std::integral_constant<int, 1>{});
  else if (heads == 2) f(std::integral_constant<int, 2>{});
  else f(std::integral_constant<int, 4>{});
}

template <class T, int D>
void launch_decode_simt(const DecodeParams& p, dim3 grid, cudaStream_t stream) {
  dispatch_simt_heads(p.heads_per_cta, [&](auto h) {
    constexpr int kH = decltype(h)::value;
    paged_decode_kernel<T, D, kH><<<grid, DecodeTraits<T, D, kH>::kThreads, 0, stream>>>(p);
  });
}

template <class T, int D>
int decode_simt_ctas_per_sm(int heads) {
  int n = -1;
  dispatch_simt_heads(heads, [&](auto h) {
    constexpr int kH = decltype(h)::value;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, paged_decode_kernel<T, D, kH>,
                                                      DecodeTraits<T, D, kH>::kThreads, 0) != cudaSuccess) {
      n = -1;
    }
  });
  return n;
}

}  // namespace pagesim::kernels::detail

// Paged prefill attention with tensor cores (fp16 / bf16) — included only by
// prefill_{f16,bf16}.cu.
//
// One CTA = one sequence x one KV head x kRows packed query rows (row = token * group +
// head in group). Each warp owns kMTiles consecutive m16 row tiles (prefill_tile: 4 warps x 2
// tiles up to head_dim 128, 8 x 1 above), and every K/V fragment it loads feeds all of them. K/V tiles of kKeys tokens stream through a
// 2-stage cp.async pipeline into padded shared memory (row stride head_dim + 8 elements, so
// ldmatrix rows hit distinct bank groups); keys past the tile's causal limit are zero-filled,
// never read. Per tile and warp: S = Q K^T with mma.sync m16n8k16 (Q fragments kept in
// registers when the tile says so, else read per k-step), base-2 online softmax on the fp32 accumulators, P rounded to
// T and fed straight from the accumulator layout as the A operand of O += P V (V through
// ldmatrix.trans). Masking (causal limit, beyond-context keys) is applied only on tiles that
// cross the diagonal, on every tile with a sliding-window or chunked-local mask (whose keys
// before the tile's first visible key are never loaded); ALiBi on every tile when enabled.
// Output is O / l in T.
#pragma once

#include <cuda_runtime.h>

#include <limits>

#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/prefill_cta.cuh"
#include "kernels/cuda/prefill_params.h"
#include "kernels/prefill_plan.h"

namespace pagesim::kernels::detail {

template <class T, int D>
struct PrefillMmaTraits {
  static constexpr PrefillTile kTile = prefill_tile(kDTypeOf<T>, D);
  static constexpr int kWarps = kTile.warps;
  static constexpr int kMTiles = kTile.m_tiles;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kRows = kTile.rows;
  static constexpr int kKeys = kTile.keys;
  static constexpr int kStride = D + kTile.row_pad;  // shared-memory row stride, elements
  static constexpr int kStages = kTile.stages;
  static constexpr bool kQInRegisters = kTile.q_in_registers;
  static constexpr int kKSteps = D / 16;     // k-steps of S = Q K^T
  static constexpr int kNTiles = kKeys / 8;  // n8 tiles of S
  static constexpr int kDTiles = D / 8;      // n8 tiles of O
  static constexpr int kChunks = D / 8;      // 16-byte chunks per row
  static constexpr std::size_t kSmemBytes = prefill_smem_bytes(kDTypeOf<T>, D);

  static_assert(kTile.tensor_cores, "fp16/bf16 tiles use tensor cores");
  static_assert(sizeof(T) == 2, "mma.sync m16n8k16 takes 16-bit operands");
  static_assert(D % 16 == 0, "head_dim must be a multiple of the mma k-step (16)");
  static_assert(kRows == 16 * kMTiles * kWarps, "each warp owns kMTiles m16 row tiles");
  // Two CTAs per SM when the registers allow (4 warps: up to 256 registers a thread).
  static constexpr int kMinCtasPerSm = kThreads <= 128 ? 2 : 1;
  static_assert(kKeys % 16 == 0 && kDTiles % 2 == 0, "x4 ldmatrix loads two n8 tiles at once");
  static_assert((kStride * sizeof(T)) % 16 == 0, "ldmatrix / cp.async rows are 16-byte aligned");
  static_assert(((kStride * sizeof(T)) / 16) % 2 == 1, "odd 16-byte row stride: conflict-free ldmatrix");
  static_assert(kStages == 2, "the pipeline below is double-buffered");
  static_assert(kSmemBytes == sizeof(T) * kStride * (kRows + 2 * kStages * kKeys), "smem layout");
};

template <class T, int D>
__global__ void __launch_bounds__(PrefillMmaTraits<T, D>::kThreads, PrefillMmaTraits<T, D>::kMinCtasPerSm)
    paged_prefill_mma_kernel(const PrefillParams p) {
  using Tr = PrefillMmaTraits<T, D>;
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* sQ = reinterpret_cast<T*>(smem_raw);
  T* sK = sQ + Tr::kRows * Tr::kStride;
  T* sV = sK + Tr::kStages * Tr::kKeys * Tr::kStride;

  PrefillCta cta;
  if (!locate_prefill_cta<Tr::kRows, Tr::kKeys>(p, cta)) return;  // uniform across the CTA

  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / 32;
  const int lane = tid % 32;
  const T* kc = static_cast<const T*>(p.k_cache);
  const T* vc = static_cast<const T*>(p.v_cache);

  // Q tile -> shared memory (rows past the sequence are zero).
  for (int i = tid; i < Tr::kRows * Tr::kChunks; i += Tr::kThreads) {
    const int row = i / Tr::kChunks;
    const int c = i % Tr::kChunks;
    const int r = cta.r0 + row;
    const bool valid = r < cta.rows_total;
    const T* src = valid ? cta.query_row<T>(p, r) + c * 8 : static_cast<const T*>(p.query);
    cp_async_16(sQ + row * Tr::kStride + c * 8, src, valid);
  }
  auto load_kv = [&](int j, int stage) {
    T* dk = sK + stage * Tr::kKeys * Tr::kStride;
    T* dv = sV + stage * Tr::kKeys * Tr::kStride;
    for (int i = tid; i < Tr::kKeys * Tr::kChunks; i += Tr::kThreads) {
      const int row = i / Tr::kChunks;
      const int c = i % Tr::kChunks;
      const int key = j * Tr::kKeys + row;
      const bool valid = cta.loads_key(key);
      const std::int64_t off = valid ? cta.key_offset(p, key) : 0;
      cp_async_16(dk + row * Tr::kStride + c * 8, kc + off + c * 8, valid);
      cp_async_16(dv + row * Tr::kStride + c * 8, vc + off + c * 8, valid);
    }
  };
  load_kv(cta.j_begin, 0);
  cp_async_commit();

  // The rows this thread holds in mma accumulator layout: in each of its warp's m16 tiles,
  // lane / 4 and lane / 4 + 8. Index [mt][h]: tile mt, half h.
  // Per-row values (position, first visible key, ALiBi slope, output row) are recomputed
  // per key tile where needed rather than held: with two tiles' accumulators the registers
  // are full.
  constexpr int kM = Tr::kMTiles;
  auto row_of = [&](int mt, int h) { return cta.r0 + (warp * kM + mt) * 16 + lane / 4 + 8 * h; };

  float o[kM][Tr::kDTiles][4];
  float m[kM][2], l[kM][2];
#pragma unroll
  for (int mt = 0; mt < kM; ++mt) {
#pragma unroll
    for (int i = 0; i < Tr::kDTiles; ++i) o[mt][i][0] = o[mt][i][1] = o[mt][i][2] = o[mt][i][3] = 0.f;
    m[mt][0] = m[mt][1] = kNegInf;
    l[mt][0] = l[mt][1] = 0.f;
  }
  uint32_t qf[Tr::kQInRegisters ? kM : 1][Tr::kQInRegisters ? Tr::kKSteps : 1][4];

  const T* q_frag_base = sQ + (warp * kM * 16 + lane % 16) * Tr::kStride + (lane / 16) * 8;
  for (int j = cta.j_begin; j < cta.n_tiles; ++j) {
    const int stage = (j - cta.j_begin) % 2;
    if (j + 1 < cta.n_tiles) {
      load_kv(j + 1, 1 - stage);
      cp_async_commit();
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    if constexpr (Tr::kQInRegisters) {
      if (j == cta.j_begin) {
#pragma unroll
        for (int mt = 0; mt < kM; ++mt) {
#pragma unroll
          for (int kk = 0; kk < Tr::kKSteps; ++kk) ldmatrix_x4(qf[mt][kk], q_frag_base + mt * 16 * Tr::kStride + kk * 16);
        }
      }
    }
    const T* k_tile = sK + stage * Tr::kKeys * Tr::kStride;
    const T* v_tile = sV + stage * Tr::kKeys * Tr::kStride;

    // S = Q K^T (fp32).
    float s[kM][Tr::kNTiles][4];
#pragma unroll
    for (int mt = 0; mt < kM; ++mt) {
#pragma unroll
      for (int i = 0; i < Tr::kNTiles; ++i) s[mt][i][0] = s[mt][i][1] = s[mt][i][2] = s[mt][i][3] = 0.f;
    }
    const T* k_frag_base = k_tile + (lane % 8 + (lane / 16) * 8) * Tr::kStride + ((lane / 8) % 2) * 8;
#pragma unroll
    for (int kk = 0; kk < Tr::kKSteps; ++kk) {
      uint32_t a[kM][4];
#pragma unroll
      for (int mt = 0; mt < kM; ++mt) {
        if constexpr (Tr::kQInRegisters) {
#pragma unroll
          for (int x = 0; x < 4; ++x) a[mt][x] = qf[mt][kk][x];
        } else {
          ldmatrix_x4(a[mt], q_frag_base + mt * 16 * Tr::kStride + kk * 16);
        }
      }
#pragma unroll
      for (int np = 0; np < Tr::kNTiles / 2; ++np) {
        uint32_t b[4];
        ldmatrix_x4(b, k_frag_base + np * 16 * Tr::kStride + kk * 16);
#pragma unroll
        for (int mt = 0; mt < kM; ++mt) {
          mma_16816<T>(s[mt][2 * np], a[mt], b[0], b[1]);
          mma_16816<T>(s[mt][2 * np + 1], a[mt], b[2], b[3]);
        }
      }
    }

    // Scale to base 2, ALiBi, mask (causal: only where the tile crosses the diagonal).
    const int key0 = j * Tr::kKeys;
    const bool need_mask = cta.windowed || key0 + Tr::kKeys - 1 > cta.diag;
    const bool alibi = p.alibi_slopes != nullptr;
#pragma unroll
    for (int mt = 0; mt < kM; ++mt) {
#pragma unroll
      for (int nt = 0; nt < Tr::kNTiles; ++nt) {
#pragma unroll
        for (int c = 0; c < 4; ++c) s[mt][nt][c] *= p.scale_log2;
      }
    }
    if (alibi || need_mask) {
#pragma unroll
      for (int mt = 0; mt < kM; ++mt) {
        PrefillRowScore row[2];
#pragma unroll
        for (int h = 0; h < 2; ++h) row[h] = cta.row_score(p, row_of(mt, h), alibi);
#pragma unroll
        for (int nt = 0; nt < Tr::kNTiles; ++nt) {
#pragma unroll
          for (int c = 0; c < 4; ++c) {
            const int key = key0 + nt * 8 + (lane % 4) * 2 + (c % 2);
            s[mt][nt][c] = row[c / 2].apply(s[mt][nt][c], key, alibi, need_mask);
          }
        }
      }
    }

    // Online softmax per row, rescaling lazily: the reference max m moves (and O and l are
    // rescaled) only when some row of the warp sees a score more than kRescaleSlack above
    // its m, so P = 2^(s - m) <= 2^kRescaleSlack (well inside fp16) and O / l is the same
    // softmax. Past the first key tiles the max rarely grows that much, and the 2 x 64
    // multiplies of O per row pair are skipped. P overwrites S.
    constexpr float kRescaleSlack = 8.f;
    float tile_max[kM][2];
    bool grow = false;
#pragma unroll
    for (int mt = 0; mt < kM; ++mt) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float mx = kNegInf;
#pragma unroll
        for (int nt = 0; nt < Tr::kNTiles; ++nt) mx = fmaxf(mx, fmaxf(s[mt][nt][2 * h], s[mt][nt][2 * h + 1]));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        tile_max[mt][h] = mx;
        grow = grow || mx > m[mt][h] + kRescaleSlack;  // m = -inf: any finite score grows it
      }
    }
    if (__any_sync(0xffffffffu, grow)) {
#pragma unroll
      for (int mt = 0; mt < kM; ++mt) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const float mx = fmaxf(m[mt][h], tile_max[mt][h]);
          const float alpha = fast_exp2(m[mt][h] - (mx == kNegInf ? 0.f : mx));
          m[mt][h] = mx;
          l[mt][h] *= alpha;
#pragma unroll
          for (int dt = 0; dt < Tr::kDTiles; ++dt) {
            o[mt][dt][2 * h] *= alpha;
            o[mt][dt][2 * h + 1] *= alpha;
          }
        }
      }
    }
#pragma unroll
    for (int mt = 0; mt < kM; ++mt) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float m_use = m[mt][h] == kNegInf ? 0.f : m[mt][h];
#pragma unroll
        for (int nt = 0; nt < Tr::kNTiles; ++nt) {
          s[mt][nt][2 * h] = fast_exp2(s[mt][nt][2 * h] - m_use);
          s[mt][nt][2 * h + 1] = fast_exp2(s[mt][nt][2 * h + 1] - m_use);
          l[mt][h] += s[mt][nt][2 * h] + s[mt][nt][2 * h + 1];
        }
      }
    }

    // O += P V.
    const T* v_frag_base = v_tile + (lane % 8 + ((lane / 8) % 2) * 8) * Tr::kStride + (lane / 16) * 8;
#pragma unroll
    for (int kt = 0; kt < Tr::kKeys / 16; ++kt) {
      uint32_t a[kM][4];
#pragma unroll
      for (int mt = 0; mt < kM; ++mt) {
        a[mt][0] = pack2<T>(s[mt][2 * kt][0], s[mt][2 * kt][1]);
        a[mt][1] = pack2<T>(s[mt][2 * kt][2], s[mt][2 * kt][3]);
        a[mt][2] = pack2<T>(s[mt][2 * kt + 1][0], s[mt][2 * kt + 1][1]);
        a[mt][3] = pack2<T>(s[mt][2 * kt + 1][2], s[mt][2 * kt + 1][3]);
      }
#pragma unroll
      for (int dp = 0; dp < Tr::kDTiles / 2; ++dp) {
        uint32_t b[4];
        ldmatrix_x4_trans(b, v_frag_base + kt * 16 * Tr::kStride + dp * 16);
#pragma unroll
        for (int mt = 0; mt < kM; ++mt) {
          mma_16816<T>(o[mt][2 * dp], a[mt], b[0], b[1]);
          mma_16816<T>(o[mt][2 * dp + 1], a[mt], b[2], b[3]);
        }
      }
    }
    __syncthreads();  // this stage is refilled next iteration
  }
  cp_async_wait<0>();  // nothing in flight at exit, even when no key tile ran

  // Epilogue: complete row sums across the quad, normalise, store.
#pragma unroll
  for (int mt = 0; mt < kM; ++mt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float lsum = l[mt][h];
      lsum += __shfl_xor_sync(0xffffffffu, lsum, 1);
      lsum += __shfl_xor_sync(0xffffffffu, lsum, 2);
      const int r = row_of(mt, h);
      if (r >= cta.rows_total) continue;
      const float inv = lsum > 0.f ? 1.f / lsum : 0.f;
      T* dst = cta.out_row<T>(p, r) + (lane % 4) * 2;
#pragma unroll
      for (int dt = 0; dt < Tr::kDTiles; ++dt) {
        *reinterpret_cast<uint32_t*>(dst + dt * 8) = pack2<T>(o[mt][dt][2 * h] * inv, o[mt][dt][2 * h + 1] * inv);
      }
    }
  }
}

template <class T, int D>
cudaError_t launch_prefill_mma(const PrefillParams& p, dim3 grid, std::size_t smem, cudaStream_t stream) {
  using Tr = PrefillMmaTraits<T, D>;
  cudaError_t status = cudaFuncSetAttribute(paged_prefill_mma_kernel<T, D>,
                                            cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  if (status != cudaSuccess) return status;
  // The most shared memory the SM offers: two 104 KB CTAs share one.
  status = cudaFuncSetAttribute(paged_prefill_mma_kernel<T, D>, cudaFuncAttributePreferredSharedMemoryCarveout,
                                cudaSharedmemCarveoutMaxShared);
  if (status != cudaSuccess) return status;
  paged_prefill_mma_kernel<T, D><<<grid, Tr::kThreads, smem, stream>>>(p);
  return cudaSuccess;
}

#define PAGESIM_INSTANTIATE_PREFILL_MMA(T, D) \
  template cudaError_t launch_prefill_mma<T, D>(const PrefillParams&, dim3, std::size_t, cudaStream_t);

}  // namespace pagesim::kernels::detail

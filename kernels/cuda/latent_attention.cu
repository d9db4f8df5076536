// Absorbed MLA over a paged latent cache on tensor cores (mma.sync m16n8k16), and its host
// launcher (kernels/latent_attention.h).
//
// One CTA = one sequence x 64 query rows (row = query token x head, token-major: with 128
// heads a decode token is two CTAs; with 16 heads a CTA holds 4 tokens) x one partition of
// its keys. 8 warps: warp w takes the 16 rows of row group w / 2 and the output columns
// [256 (w % 2), +256) — an m16 tile of 512 fp32 outputs would need 256 registers per thread,
// half of it fits. Both warps of a row group compute the same S = Q L^T and softmax (the
// price of keeping everything in registers: 1.53x the minimum tensor-core work), so no warp
// waits for another inside a tile.
// Per tile of 32 keys (the latent rows, read once per CTA into shared memory: cp.async,
// two stages, one CTA barrier per tile; fp8 rows are loaded to registers one tile ahead and
// widened to 16 bits on their way to shared memory, exactly): S over the 576 dims (Q from
// shared memory, ldmatrix), base-2 online softmax per row with the causal mask (row r of a
// prefill chunk sees keys <= its position), P rounded to the query dtype as the A operand of
// O += P V with V = the first 512 columns of the same tile. Keys past the partition are
// zero-filled (0 x NaN would poison O) and masked.
// One partition writes out; several write fp32 partials and their base-2 LSE, which
// latent_merge_kernel combines.
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "kernels/arg_check.h"
#include "kernels/cuda/cuda_host.h"
#include "kernels/cuda/device_common.cuh"
#include "kernels/kv_layout.h"
#include "kernels/latent_attention.h"

namespace pagesim::kernels {

namespace detail {

namespace {

struct LatentParams {
  const void* query = nullptr;
  void* out = nullptr;
  const void* cache = nullptr;
  KvCacheGeometry geo;
  BlockTableView table;
  const std::int32_t* kv_lens = nullptr;
  const std::int32_t* query_starts = nullptr;  // null: decode
  std::int64_t q_stride_token = 0, q_stride_head = 0;
  std::int64_t o_stride_token = 0, o_stride_head = 0;
  std::int32_t num_heads = 0;
  std::int32_t block_shift = 0;
  float scale_log2 = 0;  // scale x cache_scale x log2(e)
  float out_scale = 1;   // cache_scale (V is the same latent)
  std::int32_t partitions = 1;
  std::int32_t partition_tokens = 0;
  std::int32_t rows_stride = 0;  // row_chunks x kRows
  float* partial_out = nullptr;  // [seq][row][partition][kVDim]
  float* partial_lse = nullptr;  // [seq][row][partition]
};

template <class T, class C>
struct LatentTraits {
  static constexpr int kDim = latent_limits::kLatentDim;
  static constexpr int kVDim = latent_limits::kValueDim;
  static constexpr int kRows = latent_tile::kRows;
  static constexpr int kKeys = latent_tile::kKeys;
  static constexpr int kWarps = latent_tile::kWarps;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kStride = kDim + latent_tile::kRowPad;  // shared-memory row, elements
  static constexpr int kStages = latent_tile::kStages;
  static constexpr int kStageElems = kKeys * kStride;
  static constexpr int kKSteps = kDim / 16;       // k-steps of S
  static constexpr int kOTiles = kVDim / 2 / 8;   // n8 tiles of one warp's half of O
  static constexpr int kChunks = kDim / 8;        // 8-element chunks per row
  static constexpr int kLoads = kKeys * kChunks / kThreads;  // chunks per thread per tile
  static constexpr bool kFp8 = std::is_same_v<C, std::uint8_t>;
  static constexpr std::size_t kSmemBytes = latent_smem_bytes(sizeof(T));

  static_assert(sizeof(T) == 2, "mma.sync m16n8k16 takes 16-bit operands");
  static_assert(kFp8 || std::is_same_v<C, T>, "the cache holds the query dtype or fp8");
  static_assert(kRows == 16 * (kWarps / 2), "two warps per 16-row group");
  static_assert(kKeys == 32, "a tile is two k16 steps of O += P V (four n8 tiles of S)");
  static_assert(kDim % 16 == 0 && kVDim % 32 == 0, "x4 ldmatrix loads two n8 tiles at once");
  static_assert(((kStride * sizeof(T)) / 16) % 2 == 1, "odd 16-byte row stride: conflict-free ldmatrix");
  static_assert(kKeys * kChunks % kThreads == 0, "every thread loads the same number of chunks");
  static_assert(kStages == 2, "the loop below is written for two stages");
  static_assert(kSmemBytes == sizeof(T) * (kRows + kStages * kKeys) * kStride, "smem layout");
};

// Eight fp8 E4M3 values -> eight T (exact: every E4M3 value is an f16 and a bf16).
template <class T>
__device__ __forceinline__ uint4 widen_fp8x8(uint2 v) {
  const uint32_t w[2] = {v.x, v.y};
  uint32_t r[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const auto pair = static_cast<__nv_fp8x2_storage_t>((w[i / 2] >> (16 * (i % 2))) & 0xffffu);
    const __half2_raw raw = __nv_cvt_fp8x2_to_halfraw2(pair, __NV_E4M3);
    __half2 h;
    memcpy(&h, &raw, 4);
    if constexpr (std::is_same_v<T, __half>) {
      memcpy(&r[i], &h, 4);
    } else {
      const float2 f = __half22float2(h);
      r[i] = pack2<T>(f.x, f.y);
    }
  }
  return make_uint4(r[0], r[1], r[2], r[3]);
}

template <class T, class C>
__global__ void __launch_bounds__(LatentTraits<T, C>::kThreads, 1) paged_latent_kernel(const LatentParams p) {
  using Tr = LatentTraits<T, C>;
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* q_s = reinterpret_cast<T*>(smem_raw);
  T* stages = q_s + Tr::kRows * Tr::kStride;

  const int chunk = static_cast<int>(blockIdx.x);
  const int seq = static_cast<int>(blockIdx.y);
  const int part = static_cast<int>(blockIdx.z);
  const int q_start = p.query_starts != nullptr ? p.query_starts[seq] : seq;
  const int q_len = p.query_starts != nullptr ? p.query_starts[seq + 1] - q_start : 1;
  const int rows = q_len * p.num_heads;
  const int row0 = chunk * Tr::kRows;
  if (row0 >= rows) return;  // the same for the whole CTA: no barrier is skipped
  const int kv_len = p.kv_lens[seq];
  const int n_rows = min(Tr::kRows, rows - row0);
  const int max_pos = kv_len - q_len + (row0 + n_rows - 1) / p.num_heads;
  int kb = 0;
  int ke = kv_len;
  if (p.partition_tokens > 0) {
    kb = part * p.partition_tokens;
    ke = min(kv_len, kb + p.partition_tokens);
  }
  ke = min(ke, max_pos + 1);  // no row of the CTA sees a later key
  const int n_tiles = ke > kb ? (ke - kb + Tr::kKeys - 1) / Tr::kKeys : 0;

  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / 32;
  const int lane = tid % 32;
  const int rg = warp / 2;  // row group: rows rg*16 .. rg*16+15 of the CTA
  const int ch = warp % 2;  // output columns ch*256 .. ch*256+255

  // The CTA's query rows into shared memory (zeros past n_rows): the first cp.async group.
  {
    const T* qg = static_cast<const T*>(p.query);
    for (int idx = tid; idx < Tr::kRows * Tr::kChunks; idx += Tr::kThreads) {
      const int r = idx / Tr::kChunks;
      const int c = idx % Tr::kChunks;
      const bool valid = r < n_rows;
      const int gr = row0 + (valid ? r : 0);
      const std::int64_t tok = q_start + gr / p.num_heads;
      const int head = gr % p.num_heads;
      cp_async_16(q_s + r * Tr::kStride + c * 8, qg + tok * p.q_stride_token + head * p.q_stride_head + c * 8, valid);
    }
    cp_async_commit();
  }
  const C* cache = static_cast<const C*>(p.cache);
  // Key `r` of tile i's slot in the cache, or -1 past the partition's end.
  auto key_offset = [&](int i, int r) -> std::int64_t {
    const int key = kb + i * Tr::kKeys + r;
    return key < ke ? token_offset(p.geo, p.table, seq, key, 0, p.block_shift) : -1;
  };
  // 16-bit cache: tile i straight into `dst` by cp.async (zero-filled past the end).
  auto load_tile = [&](int i, T* dst) {
#pragma unroll
    for (int x = 0; x < Tr::kLoads; ++x) {
      const int idx = tid + x * Tr::kThreads;
      const int r = idx / Tr::kChunks;
      const int c = idx % Tr::kChunks;
      const std::int64_t off = key_offset(i, r);
      cp_async_16(dst + r * Tr::kStride + c * 8, cache + (off < 0 ? 0 : off) + c * 8, off >= 0);
    }
  };
  // fp8 cache: tile i into registers, then widened into `dst`.
  uint2 staged[Tr::kFp8 ? Tr::kLoads : 1];
  auto fetch_fp8 = [&](int i) {
#pragma unroll
    for (int x = 0; x < (Tr::kFp8 ? Tr::kLoads : 0); ++x) {
      const int idx = tid + x * Tr::kThreads;
      const std::int64_t off = key_offset(i, idx / Tr::kChunks);
      staged[x] = off >= 0 ? __ldg(reinterpret_cast<const uint2*>(cache + off + (idx % Tr::kChunks) * 8))
                           : make_uint2(0u, 0u);
    }
  };
  auto store_fp8 = [&](T* dst) {
#pragma unroll
    for (int x = 0; x < (Tr::kFp8 ? Tr::kLoads : 0); ++x) {
      const int idx = tid + x * Tr::kThreads;
      *reinterpret_cast<uint4*>(dst + (idx / Tr::kChunks) * Tr::kStride + (idx % Tr::kChunks) * 8) =
          widen_fp8x8<T>(staged[x]);
    }
  };

  // This thread's two rows (accumulator layout: lane / 4 and lane / 4 + 8 of the row group)
  // and their positions; a row past n_rows sees nothing (position -1).
  int pos[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = rg * 16 + lane / 4 + 8 * h;
    pos[h] = r < n_rows ? kv_len - q_len + (row0 + r) / p.num_heads : -1;
  }
  float o[Tr::kOTiles][4];
#pragma unroll
  for (int i = 0; i < Tr::kOTiles; ++i) o[i][0] = o[i][1] = o[i][2] = o[i][3] = 0.f;
  float m[2] = {kNegInf, kNegInf};
  float l[2] = {0.f, 0.f};

  const T* q_frag = q_s + (rg * 16 + lane % 16) * Tr::kStride + (lane / 16) * 8;
  auto compute = [&](const T* tile, int key0) {
    // S = Q L^T: n8 tiles 0..3 = keys 0-7, 8-15, 16-23, 24-31 of the tile.
    float s[4][4];
#pragma unroll
    for (int nt = 0; nt < 4; ++nt) s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.f;
    const T* k_frag = tile + (lane % 8 + (lane / 16) * 8) * Tr::kStride + ((lane / 8) % 2) * 8;
#pragma unroll
    for (int kk = 0; kk < Tr::kKSteps; ++kk) {
      uint32_t a[4];
      ldmatrix_x4(a, q_frag + kk * 16);
#pragma unroll
      for (int np = 0; np < 2; ++np) {
        uint32_t b[4];
        ldmatrix_x4(b, k_frag + np * 16 * Tr::kStride + kk * 16);
        mma_16816<T>(s[2 * np], a, b[0], b[1]);
        mma_16816<T>(s[2 * np + 1], a, b[2], b[3]);
      }
    }
    // Base 2; keys past the partition's end or after the row's position masked.
#pragma unroll
    for (int nt = 0; nt < 4; ++nt) {
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const int key = key0 + nt * 8 + (lane % 4) * 2 + (c % 2);
        s[nt][c] = (key >= ke || key > pos[c / 2]) ? kNegInf : s[nt][c] * p.scale_log2;
      }
    }
    // Online softmax per row; P overwrites S.
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float mx = m[h];
#pragma unroll
      for (int nt = 0; nt < 4; ++nt) mx = fmaxf(mx, fmaxf(s[nt][2 * h], s[nt][2 * h + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float m_use = mx == kNegInf ? 0.f : mx;
      const float alpha = fast_exp2(m[h] - m_use);
      m[h] = mx;
      l[h] *= alpha;
#pragma unroll
      for (int dt = 0; dt < Tr::kOTiles; ++dt) {
        o[dt][2 * h] *= alpha;
        o[dt][2 * h + 1] *= alpha;
      }
#pragma unroll
      for (int nt = 0; nt < 4; ++nt) {
        s[nt][2 * h] = fast_exp2(s[nt][2 * h] - m_use);
        s[nt][2 * h + 1] = fast_exp2(s[nt][2 * h + 1] - m_use);
        l[h] += s[nt][2 * h] + s[nt][2 * h + 1];
      }
    }
    // O += P V over the two k16 steps; V = the tile's first 512 columns, this warp's half.
    const T* v_frag = tile + (lane % 8 + ((lane / 8) % 2) * 8) * Tr::kStride + ch * (Tr::kVDim / 2) + (lane / 16) * 8;
#pragma unroll
    for (int ks = 0; ks < 2; ++ks) {
      const uint32_t a[4] = {pack2<T>(s[2 * ks][0], s[2 * ks][1]), pack2<T>(s[2 * ks][2], s[2 * ks][3]),
                             pack2<T>(s[2 * ks + 1][0], s[2 * ks + 1][1]),
                             pack2<T>(s[2 * ks + 1][2], s[2 * ks + 1][3])};
#pragma unroll
      for (int dp = 0; dp < Tr::kOTiles / 2; ++dp) {
        uint32_t b[4];
        ldmatrix_x4_trans(b, v_frag + ks * 16 * Tr::kStride + dp * 16);
        mma_16816<T>(o[2 * dp], a, b[0], b[1]);
        mma_16816<T>(o[2 * dp + 1], a, b[2], b[3]);
      }
    }
  };

  if constexpr (Tr::kFp8) {
    if (n_tiles > 0) fetch_fp8(0);
    for (int i = 0; i < n_tiles; ++i) {
      T* tile = stages + (i % 2) * Tr::kStageElems;
      store_fp8(tile);  // stage i % 2 was last read in iteration i - 2, before the barrier of i - 1
      if (i + 1 < n_tiles) fetch_fp8(i + 1);
      cp_async_wait<0>();  // the queries (first iteration)
      __syncthreads();
      compute(tile, kb + i * Tr::kKeys);
    }
  } else {
    if (n_tiles > 0) load_tile(0, stages);
    cp_async_commit();
    for (int i = 0; i < n_tiles; ++i) {
      cp_async_wait<0>();  // tile i (and the queries)
      __syncthreads();     // ... every thread's; and everyone is done with tile i - 1's stage
      if (i + 1 < n_tiles) load_tile(i + 1, stages + ((i + 1) % 2) * Tr::kStageElems);
      cp_async_commit();
      compute(stages + (i % 2) * Tr::kStageElems, kb + i * Tr::kKeys);
    }
  }
  cp_async_wait<0>();  // nothing in flight at exit

#pragma unroll
  for (int h = 0; h < 2; ++h) {
    l[h] += __shfl_xor_sync(0xffffffffu, l[h], 1);
    l[h] += __shfl_xor_sync(0xffffffffu, l[h], 2);
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = rg * 16 + lane / 4 + 8 * h;
    if (r >= n_rows) continue;
    const int gr = row0 + r;
    const std::int64_t tok = q_start + gr / p.num_heads;
    const int head = gr % p.num_heads;
    const float inv = l[h] > 0.f ? p.out_scale / l[h] : 0.f;
    const int col0 = ch * (Tr::kVDim / 2) + (lane % 4) * 2;
    if (p.partitions == 1) {
      T* dst = static_cast<T*>(p.out) + tok * p.o_stride_token + head * p.o_stride_head + col0;
#pragma unroll
      for (int dt = 0; dt < Tr::kOTiles; ++dt) {
        *reinterpret_cast<uint32_t*>(dst + dt * 8) = pack2<T>(o[dt][2 * h] * inv, o[dt][2 * h + 1] * inv);
      }
    } else {
      const std::int64_t prow = (static_cast<std::int64_t>(seq) * p.rows_stride + gr) * p.partitions + part;
      float* dst = p.partial_out + prow * Tr::kVDim + col0;
#pragma unroll
      for (int dt = 0; dt < Tr::kOTiles; ++dt) {
        *reinterpret_cast<float2*>(dst + dt * 8) = make_float2(o[dt][2 * h] * inv, o[dt][2 * h + 1] * inv);
      }
      if (ch == 0 && lane % 4 == 0) p.partial_lse[prow] = l[h] > 0.f ? m[h] + __log2f(l[h]) : kNegInf;
    }
  }
}

constexpr int kMergeThreads = latent_limits::kValueDim / 4;

// Merges the partitions of one (sequence, row): out = sum_p w_p partial_p, w_p =
// 2^(lse_p - M) / sum_q 2^(lse_q - M); a row no partition saw (every lse -inf) gets zeros.
template <class T>
__global__ void __launch_bounds__(kMergeThreads) latent_merge_kernel(const LatentParams p) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  const int gr = static_cast<int>(blockIdx.x);
  const int seq = static_cast<int>(blockIdx.y);
  const int q_start = p.query_starts != nullptr ? p.query_starts[seq] : seq;
  const int q_len = p.query_starts != nullptr ? p.query_starts[seq + 1] - q_start : 1;
  if (gr >= q_len * p.num_heads) return;
  const std::int64_t prow0 = (static_cast<std::int64_t>(seq) * p.rows_stride + gr) * p.partitions;
  float mx = kNegInf;
  for (int i = 0; i < p.partitions; ++i) mx = fmaxf(mx, p.partial_lse[prow0 + i]);
  float wsum = 0.f;
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  const int col = static_cast<int>(threadIdx.x) * 4;
  if (mx != kNegInf) {
    for (int i = 0; i < p.partitions; ++i) {
      const float w = fast_exp2(p.partial_lse[prow0 + i] - mx);
      if (w == 0.f) continue;  // a partition that saw nothing: its partial is 0, skip the read
      wsum += w;
      const float4 v = *reinterpret_cast<const float4*>(p.partial_out + (prow0 + i) * latent_limits::kValueDim + col);
      acc[0] = fmaf(w, v.x, acc[0]);
      acc[1] = fmaf(w, v.y, acc[1]);
      acc[2] = fmaf(w, v.z, acc[2]);
      acc[3] = fmaf(w, v.w, acc[3]);
    }
  }
  const float inv = wsum > 0.f ? 1.f / wsum : 0.f;
  const std::int64_t tok = q_start + gr / p.num_heads;
  T* dst = static_cast<T*>(p.out) + tok * p.o_stride_token + (gr % p.num_heads) * p.o_stride_head + col;
  *reinterpret_cast<uint32_t*>(dst) = pack2<T>(acc[0] * inv, acc[1] * inv);
  *reinterpret_cast<uint32_t*>(dst + 2) = pack2<T>(acc[2] * inv, acc[3] * inv);
}

template <class T, class C>
void launch_latent(const LatentParams& p, const LatentPlan& plan, cudaStream_t stream, const char* fn) {
  using Tr = LatentTraits<T, C>;
  check_cuda(cudaFuncSetAttribute(paged_latent_kernel<T, C>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(Tr::kSmemBytes)),
             fn, "cudaFuncSetAttribute(paged_latent_kernel)");
  paged_latent_kernel<T, C><<<to_dim3(plan.grid), Tr::kThreads, Tr::kSmemBytes, stream>>>(p);
  check_launch(fn, "paged_latent_kernel");
  if (plan.partitions > 1) {
    const LaunchGrid merge{p.rows_stride, plan.grid.y, 1};
    latent_merge_kernel<T><<<to_dim3(merge), kMergeThreads, 0, stream>>>(p);
    check_launch(fn, "latent_merge_kernel");
  }
}

}  // namespace

}  // namespace detail

std::int32_t latent_attention_target_ctas() {
  int device = 0;
  int sms = 0;
  check_cuda(cudaGetDevice(&device), "latent_attention_target_ctas", "cudaGetDevice");
  check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "latent_attention_target_ctas",
             "cudaDeviceGetAttribute(multiprocessors)");
  return sms;
}

void paged_latent_attention(const LatentAttentionArgs& a, const LatentPlan& plan, void* workspace,
                            std::size_t workspace_bytes, CUstream_st* stream) {
  const char* fn = "paged_latent_attention";
  using detail::require;
  const LatentShape s = check_latent_attention_args(a, fn, Backend::kCuda);
  require(plan.problem.num_seqs == s.num_seqs && plan.problem.num_heads == s.num_heads &&
              (!s.decode || plan.problem.max_query_len >= 1),
          fn, [&] {
            return "the plan is for " + std::to_string(plan.problem.num_seqs) + " sequences of " +
                   std::to_string(plan.problem.num_heads) + " heads; the arguments have " +
                   std::to_string(s.num_seqs) + " of " + std::to_string(s.num_heads);
          });
  require(plan.partitions == 1 ||
              (workspace != nullptr && workspace_bytes >= plan.workspace_bytes &&
               reinterpret_cast<std::uintptr_t>(workspace) % 256 == 0),
          fn, [&] {
            return "the plan's " + std::to_string(plan.partitions) + " partitions need a 256-byte aligned workspace of " +
                   std::to_string(plan.workspace_bytes) + " bytes, got " + std::to_string(workspace_bytes);
          });
  if (s.num_seqs == 0 || s.num_query_tokens == 0) return;
  detail::LatentParams p;
  p.query = a.query.data;
  p.out = a.out.data;
  p.cache = a.latent_cache.data;
  p.geo = kv_cache_geometry(a.latent_cache, fn);
  p.table = BlockTableView{a.block_table.as<const std::int32_t>(), a.block_table.stride[0]};
  p.kv_lens = a.kv_lens.as<const std::int32_t>();
  p.query_starts = s.decode ? nullptr : a.query_starts.as<const std::int32_t>();
  p.q_stride_token = a.query.stride[0];
  p.q_stride_head = a.query.stride[1];
  p.o_stride_token = a.out.stride[0];
  p.o_stride_head = a.out.stride[1];
  p.num_heads = s.num_heads;
  int shift = 0;
  while ((1 << shift) < s.block_size) ++shift;
  p.block_shift = shift;
  p.scale_log2 = a.scale * a.cache_scale * detail::kLog2e;
  p.out_scale = a.cache_scale;
  p.partitions = plan.partitions;
  p.partition_tokens = plan.partition_tokens;
  p.rows_stride = plan.row_chunks * latent_tile::kRows;
  if (plan.partitions > 1) {
    const std::int64_t prow = static_cast<std::int64_t>(s.num_seqs) * p.rows_stride * plan.partitions;
    const std::int64_t out_bytes = (prow * latent_limits::kValueDim * 4 + 255) / 256 * 256;
    p.partial_out = static_cast<float*>(workspace);
    p.partial_lse = reinterpret_cast<float*>(static_cast<char*>(workspace) + out_bytes);
  }
  const bool fp8 = s.cache_dtype == DType::kFloat8E4M3;
  const auto st = static_cast<cudaStream_t>(stream);
  if (s.dtype == DType::kFloat16) {
    if (fp8) detail::launch_latent<__half, std::uint8_t>(p, plan, st, fn);
    else detail::launch_latent<__half, __half>(p, plan, st, fn);
  } else {
    if (fp8) detail::launch_latent<__nv_bfloat16, std::uint8_t>(p, plan, st, fn);
    else detail::launch_latent<__nv_bfloat16, __nv_bfloat16>(p, plan, st, fn);
  }
}

}  // namespace pagesim::kernels

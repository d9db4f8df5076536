// Prefill planning: tile shape and grid of paged prefill attention. Pure host functions.
//
// A prefill CTA handles one sequence, one KV head and a tile of `rows` query rows, where
// the rows of a KV head's query-head group are packed (row = token * group + head in
// group), so K/V tiles loaded once serve every query head of the group. The CTA walks the
// sequence's keys in tiles of `keys` tokens up to the causal limit of its last row.
//
// Three kernels (PrefillKernel): fp16/bf16 use tensor cores, with mma.sync m16n8k16 on any
// GPU from sm_80, or, at head_dim 128 on a Hopper GPU (compute capability 9.0) when the
// build holds sm_90a code, with Hopper's asynchronous warpgroup MMA (wgmma), which reads its
// operands from shared memory without each warp loading fragments. fp32 uses a CUDA-core
// kernel (fp32 FMA; tf32 would lose precision), correct and simple rather than fast. The
// tile constants are shared with the CUDA kernels' traits, which static_assert that they
// match.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/dtype.h"
#include "kernels/launch_grid.h"

namespace pagesim::kernels {

enum class PrefillKernel : std::uint8_t { kCudaCores, kMma, kWgmma };

const char* prefill_kernel_name(PrefillKernel k);

struct PrefillTile {
  std::int32_t warps = 0;
  std::int32_t m_tiles = 1;       // tensor cores: m16 row tiles per warp (each K/V fragment feeds them all)
  std::int32_t rows = 0;          // query rows per CTA (BM)
  std::int32_t keys = 0;          // keys per K/V tile (BN)
  std::int32_t row_pad = 0;       // elements of padding per shared-memory row (bank conflicts)
  std::int32_t stages = 0;        // K/V tiles in flight (cp.async pipeline depth)
  bool tensor_cores = false;
  bool q_in_registers = false;    // Q fragments kept in registers across the key loop
};

constexpr PrefillTile prefill_tile(DType dtype, std::int32_t head_dim) {
  PrefillTile t;
  if (dtype == DType::kFloat32) {
    t.warps = 4;
    t.rows = 32;
    t.keys = 32;
    t.row_pad = 1;  // odd word stride: conflict-free column walks
    t.stages = 1;
    return t;
  }
  // Up to head_dim 128: 4 warps of two m16 row tiles (32 rows each, as FlashAttention-2), so
  // every K and V fragment read from shared memory feeds two mma and each warp has twice the
  // independent accumulators; 104 KB and 255 registers a thread let two CTAs share an SM. On
  // an H200 this took 1 x 4k causal from 185 to 209 TFLOP/s (8 warps of one tile before); 32
  // keys per tile instead of 64 avoids ptxas's ~100 bytes of spills at head_dim 128 but ran
  // 3.5% slower (experiments/results/kernels-h200/tune-prefill-*.csv). Above head_dim 128 two
  // tiles' accumulators would not fit: 8 warps of one tile.
  const bool two = head_dim <= 128;
  t.warps = two ? 4 : 8;
  t.m_tiles = two ? 2 : 1;
  t.rows = 16 * t.m_tiles * t.warps;
  t.keys = head_dim <= 128 ? 64 : 32;
  t.row_pad = 8;  // 16 bytes: ldmatrix rows land in distinct bank groups
  t.stages = 2;
  t.tensor_cores = true;
  t.q_in_registers = false;  // two tiles' Q fragments would crowd out the accumulators
  return t;
}

// The Hopper kernel's tile: two warpgroups of 64 query rows (each an m64 wgmma), 128-key
// K/V tiles double-buffered through cp.async into 128-byte-swizzled shared memory (no
// padding: the swizzle spreads the rows over the banks). 161 KB: one CTA per SM.
inline constexpr std::int32_t kPrefillWgmmaHeadDim = 128;
constexpr PrefillTile prefill_wgmma_tile() {
  PrefillTile t;
  t.warps = 8;
  t.m_tiles = 1;
  t.rows = 128;
  t.keys = 128;
  t.row_pad = 0;
  t.stages = 2;
  t.tensor_cores = true;
  t.q_in_registers = false;
  return t;
}

// Whether the Hopper kernel has code for this dtype and head size.
constexpr bool prefill_wgmma_supports(DType dtype, std::int32_t head_dim) {
  return dtype != DType::kFloat32 && head_dim == kPrefillWgmmaHeadDim;
}

// Dynamic shared memory of one Hopper prefill CTA: Q and two stages of K and V, plus 1 KB
// to align the swizzle atoms to 1024 bytes.
constexpr std::size_t prefill_wgmma_smem_bytes(std::int32_t head_dim) {
  const PrefillTile t = prefill_wgmma_tile();
  return 1024 + static_cast<std::size_t>(head_dim) * 2 *
                    (static_cast<std::size_t>(t.rows) + 2 * static_cast<std::size_t>(t.stages) * t.keys);
}

// Dynamic shared memory of one prefill CTA of the mma.sync or CUDA-core kernel, in bytes.
constexpr std::size_t prefill_smem_bytes(DType dtype, std::int32_t head_dim) {
  const PrefillTile t = prefill_tile(dtype, head_dim);
  const auto row = static_cast<std::size_t>(head_dim + t.row_pad) * dtype_size(dtype);
  std::size_t bytes = row * static_cast<std::size_t>(t.rows) +
                      2 * row * static_cast<std::size_t>(t.keys) * static_cast<std::size_t>(t.stages);
  if (!t.tensor_cores) {
    bytes += sizeof(float) * static_cast<std::size_t>(t.rows) * static_cast<std::size_t>(t.keys + 1);
  }
  return bytes;
}

struct PrefillProblem {
  std::int32_t num_seqs = 0;
  std::int32_t num_q_heads = 0;
  std::int32_t num_kv_heads = 0;
  std::int32_t head_dim = 0;
  DType dtype = DType::kFloat16;
  std::int32_t max_query_len = 0;  // host-side maximum of the batch's query lengths
  bool wgmma = false;  // the device and the build run the Hopper kernel (prefill_problem sets it)
};

struct PrefillPlan {
  PrefillKernel kernel = PrefillKernel::kMma;
  PrefillTile tile;
  std::int32_t row_tiles = 0;   // grid.x: tiles of the longest sequence's packed rows
  std::int32_t kv_heads = 0;    // grid.y
  std::int32_t num_seqs = 0;    // grid.z
  std::size_t smem_bytes = 0;
  std::int64_t num_ctas() const { return static_cast<std::int64_t>(row_tiles) * kv_heads * num_seqs; }
};

// Throws KernelError on non-positive head counts or a group size that is not an integer,
// or a grid beyond CUDA's limits (more than 65535 sequences or KV heads; launch_grid.h).
// Chooses the kernel: wgmma where problem.wgmma and prefill_wgmma_supports, else mma.sync
// for 16-bit dtypes and CUDA cores for fp32.
PrefillPlan plan_prefill(const PrefillProblem& problem);

// The plan on a forced kernel (tests, benchmarks). Also throws KernelError when the kernel
// has no code for the problem: CUDA cores take fp32 only, mma.sync 16-bit dtypes only, wgmma
// needs problem.wgmma and prefill_wgmma_supports.
PrefillPlan make_prefill_plan(const PrefillProblem& problem, PrefillKernel kernel);

// The tile and the dynamic shared memory of `kernel` at this dtype and head size.
PrefillTile prefill_kernel_tile(PrefillKernel kernel, DType dtype, std::int32_t head_dim);
std::size_t prefill_kernel_smem_bytes(PrefillKernel kernel, DType dtype, std::int32_t head_dim);

// The launch grid of a plan: x = row tiles, y = KV heads, z = sequences.
LaunchGrid prefill_grid(const PrefillPlan& plan);

// Throws KernelError naming both sizes unless the plan's dynamic shared memory fits
// `max_optin_bytes`, the device's per-block opt-in limit
// (cudaDevAttrMaxSharedMemoryPerBlockOptin: 227 KiB on H100/H200, 99 KiB on sm_86/sm_89).
void check_prefill_smem(const PrefillPlan& plan, std::int64_t max_optin_bytes, const char* fn);

}  // namespace pagesim::kernels

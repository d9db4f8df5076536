// Decode planning: how paged decode attention is split into CTAs. Pure host functions, no
// CUDA: the launcher, the tests and the simulator's cost model call the same planner.
//
// Work unit. A decode CTA handles one sequence, one KV head and up to heads_per_cta of the
// query heads that share it (GQA), so K and V are read once per group, and a range of the
// sequence's tokens. Two kernels do it (DecodeKernel): on CUDA cores, every lane multiplies
// its share of a key row into each query head in fp32, so its instructions grow with the
// group; on tensor cores (16-bit dtypes, groups of 2 or more), the group's query heads are
// the 16 rows of an mma.sync tile, so a key costs the same whatever the group. v1 gives each CTA the whole sequence and writes the output directly.
// v2 (flash-decoding) cuts each sequence into partitions of partition_size tokens; every
// partition writes an fp32 partial output and its log-sum-exp to a workspace, and a second
// kernel merges the partitions. v2 pays a small workspace round trip to fill the GPU when
// there are few sequences or long ones.
//
// The tile constants (decode_tile) are shared with the CUDA kernel's traits, which
// static_assert that they match.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "kernels/dtype.h"
#include "kernels/launch_grid.h"

namespace pagesim::kernels {

enum class DecodeKernel : std::uint8_t { kCudaCores, kTensorCores };

const char* decode_kernel_name(DecodeKernel k);

// Query heads one CUDA-core CTA holds: the group rounded up to a power of two, at most 4 (the
// registers per head: its query, accumulator and scores; MHA pays for one head, not four).
constexpr std::int32_t decode_simt_heads(std::int32_t group_size) {
  return group_size <= 1 ? 1 : group_size <= 2 ? 2 : 4;
}

// Tile constants of the CUDA-core decode kernel for one element size, head size and heads
// per CTA (decode_simt_heads).
struct DecodeTile {
  std::int32_t warps = 4;            // warps per CTA
  std::int32_t heads_per_cta = 4;    // query heads of one KV group handled by one CTA
  std::int32_t vec_elems = 0;        // elements per 16-byte vector
  std::int32_t lanes_per_token = 0;  // lanes that share one token row (power of two <= 32)
  std::int32_t vecs_per_lane = 0;    // 16-byte vectors of one row held by one lane
  std::int32_t tokens_per_group = 0; // consecutive tokens a lane group loads per iteration
  std::int32_t tokens_per_iteration = 0;  // tokens a CTA consumes per loop iteration
};

constexpr std::int32_t next_pow2(std::int32_t x) {
  std::int32_t p = 1;
  while (p < x) p *= 2;
  return p;
}

constexpr DecodeTile decode_tile(std::int32_t elem_bytes, std::int32_t head_dim, std::int32_t heads_per_cta = 4) {
  DecodeTile t;
  t.heads_per_cta = heads_per_cta;
  t.vec_elems = 16 / elem_bytes;
  const std::int32_t vecs = head_dim / t.vec_elems;
  t.lanes_per_token = next_pow2(vecs) < 32 ? next_pow2(vecs) : 32;
  t.vecs_per_lane = (vecs + t.lanes_per_token - 1) / t.lanes_per_token;
  t.tokens_per_group = 8 / t.vecs_per_lane;  // 8 (K) + 8 (V) 16-byte loads in flight per lane
  t.tokens_per_iteration = t.warps * (32 / t.lanes_per_token) * t.tokens_per_group;
  return t;
}

// Tile constants of the tensor-core decode kernel (16-bit dtypes; head_dim a multiple of 16).
// Each warp streams its own key tiles (every kWarps-th tile of the CTA's range) through a
// private cp.async pipeline of `stages` tiles of `keys` tokens (K and V, rows padded by 8
// elements); the warps' softmax states are merged through shared memory at the end.
struct DecodeMmaTile {
  std::int32_t warps = 4;
  std::int32_t heads_per_cta = 16;  // the mma tile's M: query heads of one group
  std::int32_t keys = 16;           // tokens per warp tile (one k16 step of P V)
  std::int32_t stages = 3;          // warp tiles in flight
  std::int32_t row_pad = 8;         // elements: odd 16-byte row stride, conflict-free ldmatrix
};

// Three stages (104 KB at head_dim 128: two CTAs per SM); two above head_dim 128, so head_dim
// 256 (132 KB) fits the 163 KB an A100 CTA may opt into.
constexpr DecodeMmaTile decode_mma_tile(std::int32_t head_dim) {
  DecodeMmaTile t;
  t.stages = head_dim > 128 ? 2 : 3;
  return t;
}

// Dynamic shared memory of the tensor-core decode kernel: each warp's K and V stages (16-bit).
constexpr std::size_t decode_mma_smem_bytes(std::int32_t head_dim) {
  const DecodeMmaTile t = decode_mma_tile(head_dim);
  return static_cast<std::size_t>(t.warps) * t.stages * 2 * t.keys * (head_dim + t.row_pad) * 2;
}

// Groups of at least this many query heads per KV head decode on tensor cores (16-bit dtypes).
inline constexpr std::int32_t kDecodeMmaMinGroup = 2;

// The kernel decode uses for these shapes: tensor cores for f16/bf16 with a group of
// kDecodeMmaMinGroup or more, CUDA cores otherwise.
DecodeKernel decode_kernel_for(DType dtype, std::int32_t group_size);

// Query heads one CTA of kernel k handles for a group of group_size.
std::int32_t decode_heads_per_cta(DecodeKernel k, std::int32_t group_size);

enum class DecodeAlgo : std::uint8_t { kV1, kV2 };

const char* decode_algo_name(DecodeAlgo a);

struct DecodeProblem {
  std::int32_t num_seqs = 0;
  std::int32_t num_q_heads = 0;
  std::int32_t num_kv_heads = 0;
  std::int32_t head_dim = 0;
  DType dtype = DType::kFloat16;
  std::span<const std::int32_t> kv_lens;  // host copy of the batch's kv_lens; read during the call
};

// How many decode CTAs the GPU runs at once (from the CUDA occupancy API, see
// paged_attention.h: decode_device_caps). Defaults: an H100 with 3 CTAs per SM.
struct DecodeDeviceCaps {
  std::int32_t num_sms = 132;
  std::int32_t ctas_per_sm = 3;
};

struct DecodePlan {
  DecodeAlgo algo = DecodeAlgo::kV1;
  DecodeKernel kernel = DecodeKernel::kCudaCores;
  std::int32_t partition_size = 0;   // v2: tokens per partition; v1: 0 (whole sequence)
  std::int32_t max_partitions = 1;   // v2: partitions of the longest sequence; v1: 1
  std::int32_t heads_per_cta = 4;
  std::int32_t head_groups = 1;      // CTAs per KV head: ceil(group size / heads_per_cta)
  std::int32_t max_kv_len = 0;
  std::size_t workspace_bytes = 0;   // device scratch the launch needs (v2 partials)
  std::size_t partial_out_offset = 0;  // byte offsets inside the workspace
  std::size_t partial_lse_offset = 0;
};

// Byte layout of the v2 workspace: fp32 partial outputs [num_seqs, num_q_heads,
// max_partitions, head_dim], then their base-2 log-sum-exps [num_seqs, num_q_heads,
// max_partitions]; each part 256-byte aligned.
struct DecodeWorkspaceLayout {
  std::size_t partial_out_offset = 0;
  std::size_t partial_lse_offset = 0;
  std::size_t bytes = 0;
};
DecodeWorkspaceLayout decode_workspace_layout(std::int32_t num_seqs, std::int32_t num_q_heads,
                                              std::int32_t max_partitions, std::int32_t head_dim);

// Grid of the decode kernel: x = one CTA per (sequence, KV head, head group), y = the plan's
// partitions (v2) or 1 (v1).
LaunchGrid decode_kernel_grid(const DecodePlan& plan, std::int32_t num_seqs, std::int32_t num_kv_heads);
// Grid of the v2 merge kernel: x = sequence, y = query head. Sequences go on x because a
// batch may hold more than 65535 of them; query heads never approach that.
LaunchGrid decode_merge_grid(std::int32_t num_seqs, std::int32_t num_q_heads);

// Partition sizes v2 may choose from (each a multiple of every tile's tokens_per_iteration).
inline constexpr std::int32_t kDecodePartitionSizes[] = {256, 512, 1024, 2048, 4096};

// Chooses v1 or v2 and the partition size by an estimate of the makespan in token-units:
// total work / CTA slots + the longest unit + per-CTA and merge overheads; ties go to v1.
// Deterministic. Throws KernelError on non-positive sizes, a group size that is not an
// integer, a negative kv_len, or a batch whose decode grid exceeds CUDA's limits
// (launch_grid.h); v2 candidates whose grids do not fit are skipped.
DecodePlan plan_decode(const DecodeProblem& problem, const DecodeDeviceCaps& caps);

// The plan for a forced algorithm (tests, benchmarks), on `kernel` (default: decode_kernel_for
// the problem). partition_size is ignored for v1 and must be >= 1 for v2; throws KernelError
// when tensor cores are forced for a 32-bit dtype; throws KernelError when v2 would need more than
// limits::kMaxDecodePartitions partitions, or when a grid the plan launches (decode kernel;
// v2 also the merge kernel) exceeds CUDA's limits.
DecodePlan make_decode_plan(const DecodeProblem& problem, DecodeAlgo algo,
                            std::int32_t partition_size, std::optional<DecodeKernel> kernel = std::nullopt);

}  // namespace pagesim::kernels

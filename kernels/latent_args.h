// Multi-head latent attention (MLA: DeepSeek-V2, arXiv 2405.04434 §2.1) in its absorbed form,
// over a paged latent cache: arguments, their validation, and the CUDA kernel's plan.
//
// Absorbed MLA. Each token of a layer caches one latent row of latent_dim elements (DeepSeek-
// V2/V3, Kimi-K2: kv_lora_rank 512 + qk_rope_head_dim 64 = 576), shared by every query head.
// With the key and value up-projections absorbed into the query and the output, a query head
// is a latent_dim-wide vector that attends to the latent rows as keys, and the value of a key
// is its latent row's first value_dim (= kv_lora_rank) elements: multi-query attention whose
// one KV head has K = the latent row and V = its prefix. So
//     out = softmax(scale · q · L^T) · L[:, :value_dim],
// which is exactly standard attention with one KV head, K = V = L, keeping the first value_dim
// output columns: the CPU reference (reference_latent_attention.h) computes it that way.
// vLLM runs this form for decode (vllm/v1/attention/backends/mla/common.py, "MLA decode as
// MQA"; FlashMLA reads the 576-wide rows and writes 512-wide outputs), with 64-token pages
// (sim/cost/latent_attention.h kFlashMlaPageTokens).
//
// Layout. The latent cache is kv_layout.h's paged cache with one head:
// [num_blocks, 1, block_size, latent_dim]; the block table, kv_lens and query_starts mean what
// they mean in attention_args.h (query i of sequence s sits at position kv_len - query_len + i
// and sees keys 0..that position; decode when query_starts is empty). Query rows are
// [num_query_tokens, num_heads, latent_dim], outputs [num_query_tokens, num_heads, value_dim].
//
// fp8. A cache of DType::kFloat8E4M3 stores latent / cache_scale (one scale per tensor, vLLM's
// fp8 kv-cache with its per-layer k_scale; FlashMLA's dense fp8 form,
// sim/cost/latent_attention.h): the latent is stored value x cache_scale.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/attention_args.h"
#include "kernels/dtype.h"
#include "kernels/launch_grid.h"
#include "kernels/tensor_view.h"

namespace pagesim::kernels {

struct LatentAttentionArgs {
  TensorView query;         // [num_query_tokens, num_heads, latent_dim]
  TensorView out;           // [num_query_tokens, num_heads, value_dim], written
  TensorView latent_cache;  // [num_blocks, 1, block_size, latent_dim]
  TensorView block_table;   // i32 [num_seqs, max_blocks_per_seq], row stride >= columns
  TensorView kv_lens;       // i32 [num_seqs]
  TensorView query_starts;  // i32 [num_seqs + 1]; empty: decode, row s is sequence s's query
  float scale = 1.0f;       // multiplies q . l (DeepSeek: 1/sqrt(qk_nope + qk_rope head dims))
  float cache_scale = 1.0f; // fp8 cache: the latent is the stored value x cache_scale; else 1
};

// Sizes read off validated arguments.
struct LatentShape {
  std::int32_t num_seqs = 0;
  std::int32_t num_query_tokens = 0;
  std::int32_t num_heads = 0;
  std::int32_t latent_dim = 0;
  std::int32_t value_dim = 0;
  std::int32_t block_size = 0;
  std::int32_t num_blocks = 0;
  bool decode = false;
  DType dtype = DType::kFloat32;        // of query and out
  DType cache_dtype = DType::kFloat32;  // of the latent cache
};

// The CUDA kernel's sizes (latent_dim and value_dim are template constants of it).
namespace latent_limits {
inline constexpr std::int32_t kLatentDim = 576;  // kv_lora_rank 512 + qk_rope_head_dim 64
inline constexpr std::int32_t kValueDim = 512;   // kv_lora_rank
}  // namespace latent_limits

// Checks shapes, dtypes, strides and (kCuda) the kernel's sizes: f16 or bf16 query and out
// of one dtype, a cache of that dtype or fp8, latent_dim 576 and value_dim 512, a power-of-
// two block size of limits.h, 16-byte rows. kReference: query f32/f16/bf16, any cache dtype
// of those or fp8, any sizes with value_dim <= latent_dim. Both: cache_scale finite and > 0,
// and 1 unless the cache is fp8. Reads no tensor data. Throws KernelError naming `fn`.
LatentShape check_latent_attention_args(const LatentAttentionArgs& args, const char* fn, Backend backend);

// --- the CUDA kernel's plan (pure host code) --------------------------------------------

// Tile constants of the kernel, shared with its traits (which static_assert them).
namespace latent_tile {
inline constexpr std::int32_t kRows = 64;    // query rows (token x head) per CTA
inline constexpr std::int32_t kKeys = 32;    // keys per tile
inline constexpr std::int32_t kWarps = 8;    // 4 row groups of 16 x 2 halves of the output
inline constexpr std::int32_t kRowPad = 8;   // elements of padding per shared-memory row
inline constexpr std::int32_t kStages = 2;   // shared-memory stages of the latent tile
// Shortest partition a split sequence gets (tokens): below it the merge costs more than the
// extra CTAs gain.
inline constexpr std::int32_t kMinPartitionTokens = 256;
}  // namespace latent_tile

// Shared memory of one CTA: the queries and kStages latent tiles, padded rows.
constexpr std::size_t latent_smem_bytes(std::size_t elem_bytes) {
  return elem_bytes * static_cast<std::size_t>(latent_tile::kRows + latent_tile::kStages * latent_tile::kKeys) *
         static_cast<std::size_t>(latent_limits::kLatentDim + latent_tile::kRowPad);
}

struct LatentProblem {
  std::int32_t num_seqs = 0;
  std::int32_t num_heads = 0;
  std::int32_t max_query_len = 1;  // host-side maximum of the batch's query lengths
  std::int32_t max_kv_len = 0;     // host-side maximum of kv_lens
};

// How a launch is cut: grid (x: chunks of kRows query rows, y: sequences, z: partitions).
// With one partition the kernel writes `out` directly; with more, each partition writes fp32
// partial outputs and their log-sum-exp to the workspace and a second kernel merges them.
struct LatentPlan {
  LatentProblem problem;
  std::int32_t row_chunks = 0;        // ceil(max_query_len x num_heads / kRows)
  std::int32_t partitions = 1;
  std::int32_t partition_tokens = 0;  // 0 with one partition; else a multiple of kKeys
  LaunchGrid grid;
  std::size_t workspace_bytes = 0;    // 0 with one partition
};

// Splits sequences into partitions when the unsplit grid fills less than half of
// `target_ctas` (the device's multiprocessors: one CTA fills one, latent_smem_bytes), up to
// one wave, never below kMinPartitionTokens per partition. `forced_partitions` > 0 forces that many (tests), capped by max_kv_len / kKeys.
// Throws KernelError for a problem with negative sizes or a grid the device cannot launch.
LatentPlan plan_latent_attention(const LatentProblem& problem, std::int32_t target_ctas,
                                 std::int32_t forced_partitions = 0);

}  // namespace pagesim::kernels

// Arguments of paged and dense attention, and their validation.
//
// PagedAttentionArgs is what both the CPU reference (host pointers) and the CUDA launchers
// (device pointers) take: queries, outputs, the paged K/V cache of kv_layout.h, the block
// table, lengths and options. DenseAttentionArgs is the same problem on the logical
// (contiguous) token sequence of each sequence: the ground truth the paged computations are
// checked against.
//
// Semantics (both): for sequence s with kv_len L and query_len q, query i (0 <= i < q) is at
// position p = L - q + i and attends keys 0..p. Scores are scale * (q . k) plus, with ALiBi,
// slope[head] * (key_pos - p) (<= 0). Softmax over the visible keys, then the weighted sum of
// values. A query that sees no key (decode with kv_len 0) outputs zeros. `mask` narrows the
// visible keys further (sliding window, chunked local: attention_mask.h); the default is the
// causal mask above. The CPU reference and the CUDA kernels support all three. With a mask,
// a paged kernel reads only attended_blocks: the
// block-table entries of blocks before them are not read (a windowed allocator frees them). Query head h reads KV
// head h / (num_q_heads / num_kv_heads) (GQA; MQA when num_kv_heads = 1).
#pragma once

#include <cstdint>

#include "kernels/attention_mask.h"
#include "kernels/dtype.h"
#include "kernels/tensor_view.h"

namespace pagesim::kernels {

struct PagedAttentionArgs {
  TensorView query;         // [num_query_tokens, num_q_heads, head_dim]
  TensorView out;           // [num_query_tokens, num_q_heads, head_dim], written
  TensorView k_cache;       // [num_blocks, num_kv_heads, block_size, head_dim] (kv_layout.h)
  TensorView v_cache;       // same shape and strides as k_cache
  TensorView block_table;   // i32 [num_seqs, max_blocks_per_seq], row stride >= columns
  TensorView kv_lens;       // i32 [num_seqs]
  TensorView query_starts;  // i32 [num_seqs + 1]; empty: decode, row s is sequence s's query
  TensorView alibi_slopes;  // f32 [num_q_heads]; empty: no ALiBi
  float scale = 1.0f;       // multiplies q . k; usually 1 / sqrt(head_dim)
  AttentionMask mask;       // default causal
};

struct DenseAttentionArgs {
  TensorView query;         // [num_query_tokens, num_q_heads, head_dim]
  TensorView out;           // [num_query_tokens, num_q_heads, head_dim], written
  TensorView keys;          // [num_kv_tokens, num_kv_heads, head_dim]; sequence s owns rows
  TensorView values;        //   kv_starts[s] .. kv_starts[s+1]-1, in token order
  TensorView kv_starts;     // i32 [num_seqs + 1], kv_starts[0] = 0, non-decreasing
  TensorView query_starts;  // i32 [num_seqs + 1]; empty: decode, row s is sequence s's query
  TensorView alibi_slopes;  // f32 [num_q_heads]; empty: no ALiBi
  float scale = 1.0f;
  AttentionMask mask;       // default causal
};

// Sizes read off validated arguments.
struct AttentionShape {
  std::int32_t num_seqs = 0;
  std::int32_t num_query_tokens = 0;
  std::int32_t num_q_heads = 0;
  std::int32_t num_kv_heads = 0;
  std::int32_t head_dim = 0;
  std::int32_t block_size = 0;   // paged only
  std::int32_t num_blocks = 0;   // paged only
  bool decode = false;           // query_starts empty
  DType dtype = DType::kFloat32; // of query (and, for CUDA, of everything else)

  std::int32_t group_size() const { return num_q_heads / num_kv_heads; }
};

enum class Backend : std::uint8_t {
  kReference,  // host memory; any float dtypes, head sizes and block sizes >= 1
  kCuda,       // device memory; one dtype for query/out/K/V, limits.h sizes, 16-byte rows
};

// Checks shapes, dtypes, strides and (for kCuda) supported sizes and alignment, reading no
// tensor data. Throws KernelError naming `fn`, the argument and what was expected.
AttentionShape check_paged_attention_args(const PagedAttentionArgs& args, const char* fn,
                                          Backend backend);
AttentionShape check_dense_attention_args(const DenseAttentionArgs& args, const char* fn);

}  // namespace pagesim::kernels

// The paged KV-cache layout: the one place that says where the key or value of token t of
// sequence s, head h, lives. The CPU reference, every CUDA kernel and the simulator's bridge
// use these types and helpers and nothing else.
//
// Cache. K and V are two tensors with the same shape and the same strides. Logically each is
//     [num_blocks, num_kv_heads, block_size, head_dim]
// with head_dim contiguous (stride 1). The default physical layout, KvLayout::kHND, is that
// order row-major: one (block, head) is a contiguous block_size x head_dim tile, so a decode
// or prefill CTA that works on one KV head reads whole 16-byte-aligned tiles, fully
// coalesced. KvLayout::kNHD ([num_blocks, block_size, num_kv_heads, head_dim] in memory,
// FlashInfer's NHD and vLLM's V-cache order) is the same logical view with permuted strides
// and is accepted everywhere too. Element offsets are 64-bit: a cache may exceed 2^31
// elements.
//
// Block table. Sequence s owns logical blocks 0, 1, ...; logical block i lives in physical
// block block_ids[s * stride + i]. Token t of the sequence is slot t % block_size of
// logical block t / block_size. Blocks may be shared between sequences (prefix sharing,
// fork): the cache is read-only for attention. Only tokens t < kv_len[s] are ever read;
// the unused slots of a sequence's last block (its padding) may hold anything, NaN
// included, and never influence a result.
//
// Batch. Each sequence has kv_len tokens in the cache (its new tokens included: they are
// written by reshape_and_cache before attention) and its last query_len tokens attend:
// query i (0-based) sits at position p = kv_len - query_len + i and sees keys 0..p (causal).
// Decode is query_len = 1. Query rows of the batch are packed: sequence s owns rows
// query_starts[s] .. query_starts[s+1]-1 of the [num_query_tokens, num_q_heads, head_dim]
// query and output tensors.
//
// Plain value types; no synchronisation.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/tensor_view.h"

#if defined(__CUDACC__)
#define PAGESIM_HD __host__ __device__ __forceinline__
#else
#define PAGESIM_HD inline
#endif

namespace pagesim::kernels {

enum class KvLayout : std::uint8_t {
  kHND,  // memory order [block][head][slot][dim] (default)
  kNHD,  // memory order [block][slot][head][dim]
};

// Geometry and strides of one cache tensor (K or V), in elements. Device-copyable.
struct KvCacheGeometry {
  std::int32_t num_blocks = 0;
  std::int32_t num_kv_heads = 0;
  std::int32_t block_size = 0;
  std::int32_t head_dim = 0;
  std::int64_t block_stride = 0;
  std::int64_t head_stride = 0;
  std::int64_t slot_stride = 0;

  // Element offset of the first element of (physical block, kv head, slot in block).
  PAGESIM_HD std::int64_t offset(std::int64_t block, std::int64_t head, std::int64_t slot) const {
    return block * block_stride + head * head_stride + slot * slot_stride;
  }
  PAGESIM_HD std::int64_t num_slots() const {
    return static_cast<std::int64_t>(num_blocks) * block_size;
  }
};

// Elements one cache tensor (K or V) occupies in the given layout.
std::int64_t kv_cache_elements(std::int32_t num_blocks, std::int32_t num_kv_heads,
                               std::int32_t block_size, std::int32_t head_dim);

// The logical [num_blocks, num_kv_heads, block_size, head_dim] view of a cache tensor stored
// densely in `layout` at `data` (kv_cache_elements(...) elements of `dtype`).
TensorView kv_cache_view(void* data, DType dtype, KvLayout layout, std::int32_t num_blocks,
                         std::int32_t num_kv_heads, std::int32_t block_size,
                         std::int32_t head_dim);

// Reads the geometry of a cache view. Throws KernelError (naming `what`) unless the view is
// rank 4 with head_dim contiguous and non-negative strides.
KvCacheGeometry kv_cache_geometry(const TensorView& cache, const char* what);

// Block table of a batch: row s lists the physical blocks of sequence s. Device-copyable.
struct BlockTableView {
  const std::int32_t* block_ids = nullptr;  // [num_seqs, stride], row-major
  std::int64_t stride = 0;                  // entries per row (>= blocks of the longest sequence)

  PAGESIM_HD std::int32_t physical_block(std::int64_t seq, std::int64_t logical_block) const {
    return block_ids[seq * stride + logical_block];
  }
};

// Element offset of token `token` of sequence `seq`, head `head`, in a cache of geometry g.
// REQUIRES: token < kv_len of seq; g.block_size a power of two with log2 = block_shift.
PAGESIM_HD std::int64_t token_offset(const KvCacheGeometry& g, const BlockTableView& table,
                                     std::int64_t seq, std::int64_t token, std::int64_t head,
                                     int block_shift) {
  const std::int32_t block = table.physical_block(seq, token >> block_shift);
  return g.offset(block, head, token & (g.block_size - 1));
}

// Slot id used by reshape_and_cache's slot mapping: physical block * block_size + offset.
PAGESIM_HD std::int64_t slot_id(std::int64_t block, std::int64_t slot_in_block,
                                std::int32_t block_size) {
  return block * block_size + slot_in_block;
}

// --- Host-side batch description -------------------------------------------------------

// One sequence of a batch, as the allocator (or a test) sees it.
struct BatchSequence {
  std::vector<std::int32_t> block_ids;  // physical block of each logical block, in order
  std::int32_t kv_len = 0;              // tokens in the cache, new ones included
  std::int32_t query_len = 1;           // trailing tokens that attend; decode: 1
};

// The flat arrays the attention functions take (host memory; copy them to the device for
// the CUDA kernels). Views returned by the *_view() methods stay valid while this object
// lives and is not modified.
struct PackedBatch {
  std::int32_t num_seqs = 0;
  std::int64_t max_blocks_per_seq = 0;    // block table row stride (>= 1)
  std::vector<std::int32_t> block_table;  // [num_seqs * max_blocks_per_seq]; unused entries -1
  std::vector<std::int32_t> kv_lens;      // [num_seqs]
  std::vector<std::int32_t> query_starts; // [num_seqs + 1], query_starts[0] = 0
  std::int32_t max_kv_len = 0;
  std::int32_t max_query_len = 0;
  std::int64_t total_kv_tokens = 0;
  std::int64_t num_query_tokens = 0;

  TensorView block_table_view() const;   // i32 [num_seqs, max_blocks_per_seq]
  TensorView kv_lens_view() const;       // i32 [num_seqs]
  TensorView query_starts_view() const;  // i32 [num_seqs + 1]
};

// Packs sequences into flat arrays. Throws KernelError naming the sequence unless
// block_size >= 1, 0 <= query_len <= kv_len, and each sequence lists at least
// ceil(kv_len / block_size) blocks, all >= 0 (and < num_blocks when num_blocks >= 0 is given).
PackedBatch pack_batch(std::span<const BatchSequence> seqs, std::int32_t block_size,
                       std::int32_t num_blocks = -1);

}  // namespace pagesim::kernels

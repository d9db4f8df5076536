// CPU reference attention: the ground truth every CUDA kernel is tested against, and what
// `pagesim validate` runs where there is no GPU.
//
// Both work tile by tile, as the kernels do: a tile of queries (reference_tile::kQueryRows
// rows of one sequence and one KV head) against one tile of keys (kKeys) at a time, so their
// scratch is bounded by the tiles, never by query_len x kv_len; key tiles start at the first
// key some query of the tile sees and end at its last query's position (causal).
// reference_paged_attention looks each key up through the block table (key j: slot j % B of
// block block_table[s][j / B]) and keeps an online (streaming) softmax over the key tiles,
// reading only the first kv_len tokens (never a padding slot). reference_dense_attention
// computes the same function on the logical contiguous token sequence with a plain two-pass
// softmax: every row's maximum over all its key tiles first, then exp, sum and weighted sum
// of values. The two paths share only element conversion and the mask (which keys a query
// sees), so their agreement checks the paging logic and the online softmax.
// With a sliding-window or chunked-local mask (args.mask), the paged walk starts at the first
// attended block (attention_mask.h attended_blocks) and never reads, nor checks, the block
// table entries before it: a windowed allocator may have freed those blocks.
//
// Inputs may be f32, f16 or bf16 (mixed); every element is widened to double and all
// arithmetic (dot products, softmax, weighted sums) is done in double, so the reference's own
// error (~1e-15 relative) is far below any kernel tolerance. The result is rounded once to
// out's dtype (f32 recommended for comparisons). Semantics: attention_args.h.
//
// Host memory only. Arguments and the table contents (lengths, block ids, query_starts) are
// validated first: KernelError names the first problem, and nothing is written then.
// Thread-safe for distinct outputs.
#pragma once

#include <cstdint>

#include "kernels/attention_args.h"

namespace pagesim::kernels {

// Tile sizes of the CPU reference. Scratch per call: a score tile of kQueryRows x kKeys
// doubles and K, V, query and accumulator tiles of head_dim columns (~0.6 MB at head_dim
// 64). Larger tiles mean fewer passes over K/V per query and bigger matrix products; on one
// core 64-256 rows x 128-512 keys all run within 10% of each other.
namespace reference_tile {
// Query rows: kQueryRows / G queries x the G query heads of one KV head (one query's G rows
// when G > kQueryRows).
inline constexpr std::int32_t kQueryRows = 128;
inline constexpr std::int32_t kKeys = 256;       // keys per key tile
}  // namespace reference_tile

void reference_paged_attention(const PagedAttentionArgs& args);
void reference_dense_attention(const DenseAttentionArgs& args);

}  // namespace pagesim::kernels

// CPU reference attention: the ground truth every CUDA kernel is tested against, and what
// `pagesim validate` runs where there is no GPU.
//
// reference_paged_attention walks each sequence's block table block by block with an online
// (streaming) softmax, reading only the first kv_len tokens (never a padding slot).
// reference_dense_attention computes the same function on the logical contiguous token
// sequence with a plain two-pass softmax over the full score matrix. The two paths share no
// code beyond element conversion, so their agreement checks the paging logic.
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

#include "kernels/attention_args.h"

namespace pagesim::kernels {

void reference_paged_attention(const PagedAttentionArgs& args);
void reference_dense_attention(const DenseAttentionArgs& args);

}  // namespace pagesim::kernels

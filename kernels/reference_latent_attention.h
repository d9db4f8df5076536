// CPU reference of absorbed multi-head latent attention over a paged latent cache
// (latent_args.h): the ground truth the CUDA latent kernel is tested against, and what
// `pagesim validate` runs for an MLA pool where there is no GPU.
//
// It is standard paged attention with one KV head whose K and V are both the latent row,
// keeping the first value_dim output columns (latent_args.h says why that is MLA): the
// latent cache is widened once to f32 (an fp8 cache multiplied by cache_scale; every f16,
// bf16 and fp8 value is exact in f32, the fp8 product rounds once), then
// reference_paged_attention (reference_attention.h) computes in double at head_dim =
// latent_dim, and the first value_dim columns are rounded to out's dtype. So it inherits that
// reference's tiling, its validation of the table contents and its ~1e-15 own error.
//
// Host memory only; scratch: the widened cache (4 bytes per cached element) and a
// latent_dim-wide f32 output. Throws KernelError (check_latent_attention_args, then the
// table contents) before writing anything. Thread-safe for distinct outputs.
#pragma once

#include "kernels/latent_args.h"

namespace pagesim::kernels {

void reference_latent_attention(const LatentAttentionArgs& args);

}  // namespace pagesim::kernels

// DecodeParams: the plain parameter struct of the decode kernel family (v1, v2 and the v2
// merge): the common paged-attention fields plus the plan's split. Filled by the launcher
// from validated arguments and a plan.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/attention_params.h"
#include "kernels/decode_plan.h"

namespace pagesim::kernels::detail {

struct DecodeParams : PagedAttentionParams {  // query/out rows: one per sequence
  std::int32_t num_seqs = 0;
  DecodeKernel kernel = DecodeKernel::kCudaCores;
  std::int32_t heads_per_cta = 1;  // decode_heads_per_cta(kernel, group_size)
  std::int32_t head_groups = 1; // CTAs per KV head (each takes heads_per_cta query heads)
  std::int32_t head_dim = 0;
  std::int32_t partition_size = 0;  // 0: v1 (whole sequence, writes out); > 0: v2
  std::int32_t max_partitions = 1;
  float* partial_out = nullptr;  // v2: [num_seqs, num_q_heads, max_partitions, head_dim]
  float* partial_lse = nullptr;  // v2: [num_seqs, num_q_heads, max_partitions], base-2 LSE
};

// The work of one decode CTA (decode_kernel_grid: blockIdx.x = (seq * num_kv_heads + kv_head)
// * head_groups + head_group, y = partition): its sequence and KV head, its first query head
// and how many of the group it takes, and its tokens [tok_begin, tok_end): the partition's (v2)
// or all of them (v1), from the mask's first visible key on (a sliding window's or a chunk's:
// keys before it are neither read nor scored; a v2 partition left with none writes l = 0, a
// -inf LSE). `past_end`: a v2 partition that starts past the sequence, which writes nothing
// (the same for every thread of the CTA, so returning skips no barrier).
struct DecodeCtaWork {
  int seq, kv_head, partition, head0, nheads;
  int kv_len, query_pos, tok_begin, tok_end;
  bool past_end;
};

__device__ __forceinline__ DecodeCtaWork decode_cta_work(const DecodeParams& p, int heads_per_cta) {
  DecodeCtaWork w;
  const int hg = static_cast<int>(blockIdx.x % static_cast<unsigned>(p.head_groups));
  w.kv_head = static_cast<int>((blockIdx.x / p.head_groups) % static_cast<unsigned>(p.num_kv_heads));
  w.seq = static_cast<int>(blockIdx.x / p.head_groups / p.num_kv_heads);
  w.partition = static_cast<int>(blockIdx.y);
  w.head0 = w.kv_head * p.group_size + hg * heads_per_cta;
  w.nheads = min(heads_per_cta, p.group_size - hg * heads_per_cta);
  w.kv_len = p.kv_lens[w.seq];
  w.query_pos = w.kv_len - 1;
  w.tok_begin = 0;
  w.tok_end = w.kv_len;
  w.past_end = false;
  if (p.partition_size > 0) {
    w.tok_begin = w.partition * p.partition_size;
    w.past_end = w.tok_begin >= w.kv_len;
    w.tok_end = min(w.kv_len, w.tok_begin + p.partition_size);
  }
  w.tok_begin = max(w.tok_begin, first_visible_key(p, w.query_pos));
  return w;
}

// Defined by the explicit instantiations in decode_{f32,f16,bf16}.cu (decode_dispatch.cuh).
// Launches p.kernel with p.heads_per_cta heads per CTA; `grid` is decode_kernel_grid() of the
// plan, already checked against CUDA's limits. Returns the status of the kernel's attribute
// set-up (the launch itself is checked by the caller).
template <class T, int D>
cudaError_t launch_decode_kernel(const DecodeParams& p, dim3 grid, cudaStream_t stream);
// CTAs of `kernel` (with `heads` per CTA) one SM runs at once; -1 if the query failed.
template <class T, int D>
int decode_ctas_per_sm(DecodeKernel kernel, int heads);

// Defined in decode_launch.cu. `grid` is decode_merge_grid() (x = sequence, y = query head),
// already checked.
template <class T>
void launch_decode_merge(const DecodeParams& p, dim3 grid, cudaStream_t stream);

}  // namespace pagesim::kernels::detail

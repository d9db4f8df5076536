// PrefillCta: what every kernel of the paged prefill family (prefill_mma.cuh,
// prefill_wgmma.cuh, prefill_simt.cuh) agrees on about one CTA's work, so it is written once:
// which packed query rows and key tiles the CTA covers, where a row's query and output live,
// which keys are loaded, and how a row scores a key (ALiBi, causal and window masks). The
// kernels differ only in how they stage tiles and multiply. Header-only device code.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <limits>

#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/prefill_params.h"

namespace pagesim::kernels::detail {

// How one packed row scores a key: its position, its first visible key and its ALiBi slope
// (base 2; 0 without ALiBi or for a row past the sequence).
struct PrefillRowScore {
  int pos;
  int first_key;
  float slope;

  // Score x (base 2) of `key` with ALiBi's bias when `alibi`, and -inf when `need_mask` and
  // the key is after the row's position or before its first visible key.
  __device__ __forceinline__ float apply(float x, int key, bool alibi, bool need_mask) const {
    if (alibi) x += slope * static_cast<float>(key - pos);
    if (need_mask && (key > pos || key < first_key)) x = -std::numeric_limits<float>::infinity();
    return x;
  }
};

// One CTA = sequence blockIdx.z x KV head blockIdx.y x `rows` packed query rows (row =
// token * group + head in group); row tile i runs as blockIdx.x = row_tiles - 1 - i, so the
// late (heavy) tiles start first. Filled by locate_prefill_cta; constant for the CTA.
struct PrefillCta {
  int seq;
  int kv_head;
  int q0;          // the sequence's first token in the packed query
  int group;       // query heads per KV head
  int rows_total;  // the sequence's packed rows: its query tokens x group
  int r0;          // the CTA's first packed row
  int kv_len;      // the sequence's keys: history + its query tokens
  int hist;        // keys before its first query token
  int key_end;     // keys any row of the CTA sees (<= kv_len)
  int diag;        // the first row's position: keys beyond it are masked for some row
  int n_tiles;     // key tiles up to key_end
  // A sliding-window or chunked-local mask: every key tile is masked, and the keys before
  // the first row's first visible key, key_begin, are never loaded (their blocks may be freed).
  bool windowed;
  int key_begin;
  int j_begin;  // the first key tile loaded

  // Row r's key position; a row past the sequence takes the last key's (its output is never
  // stored).
  __device__ __forceinline__ int pos_of(int r) const { return r < rows_total ? hist + r / group : kv_len - 1; }
  __device__ __forceinline__ int head_of(int r) const { return kv_head * group + r % group; }
  // Row r's query and output vectors. REQUIRES r < rows_total.
  template <class T>
  __device__ __forceinline__ const T* query_row(const PrefillParams& p, int r) const {
    return static_cast<const T*>(p.query) + (q0 + r / group) * p.q_stride_token + head_of(r) * p.q_stride_head;
  }
  template <class T>
  __device__ __forceinline__ T* out_row(const PrefillParams& p, int r) const {
    return static_cast<T*>(p.out) + (q0 + r / group) * p.o_stride_token + head_of(r) * p.o_stride_head;
  }
  // Whether `key` is loaded (visible to some row); the others are zero-filled, never read.
  __device__ __forceinline__ bool loads_key(int key) const { return key >= key_begin && key < key_end; }
  // Element offset of `key`'s K (and V) vector of this KV head in the paged cache.
  __device__ __forceinline__ std::int64_t key_offset(const PrefillParams& p, int key) const {
    return token_offset(p.geo, p.table, seq, key, kv_head, p.block_shift);
  }
  __device__ __forceinline__ PrefillRowScore row_score(const PrefillParams& p, int r, bool alibi) const {
    const int pos = pos_of(r);
    return {pos, first_visible_key(p, pos),
            alibi && r < rows_total ? p.alibi_slopes[head_of(r)] * kLog2e : 0.f};
  }
};

// Fills `c` for this CTA with key tiles of `keys` keys. Returns false when the CTA's first
// row is past its sequence: it has no work (the same for every thread of the CTA).
template <int kRows, int kKeys>
__device__ __forceinline__ bool locate_prefill_cta(const PrefillParams& p, PrefillCta& c) {
  c.seq = static_cast<int>(blockIdx.z);
  c.kv_head = static_cast<int>(blockIdx.y);
  const int tile = p.row_tiles - 1 - static_cast<int>(blockIdx.x);
  c.q0 = p.query_starts[c.seq];
  const int q_len = p.query_starts[c.seq + 1] - c.q0;
  c.group = p.group_size;
  c.rows_total = q_len * c.group;
  c.r0 = tile * kRows;
  if (c.r0 >= c.rows_total) return false;
  c.kv_len = p.kv_lens[c.seq];
  c.hist = c.kv_len - q_len;
  const int t_first = c.r0 / c.group;
  const int t_last = (min(c.r0 + kRows, c.rows_total) - 1) / c.group;
  c.key_end = c.hist + t_last + 1;
  c.diag = c.hist + t_first;
  c.n_tiles = (c.key_end + kKeys - 1) / kKeys;
  c.windowed = p.mask_kind != MaskKind::kCausal;
  c.key_begin = first_visible_key(p, c.diag);
  c.j_begin = c.key_begin / kKeys;
  return true;
}

}  // namespace pagesim::kernels::detail

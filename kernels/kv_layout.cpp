#include "kernels/kv_layout.h"

#include <algorithm>
#include <string>

#include "kernels/kernel_error.h"

namespace pagesim::kernels {

std::int64_t kv_cache_elements(std::int32_t num_blocks, std::int32_t num_kv_heads,
                               std::int32_t block_size, std::int32_t head_dim) {
  return static_cast<std::int64_t>(num_blocks) * num_kv_heads * block_size * head_dim;
}

TensorView kv_cache_view(void* data, DType dtype, KvLayout layout, std::int32_t num_blocks,
                         std::int32_t num_kv_heads, std::int32_t block_size,
                         std::int32_t head_dim) {
  const std::int64_t d = head_dim;
  const std::int64_t block_stride = static_cast<std::int64_t>(num_kv_heads) * block_size * d;
  if (layout == KvLayout::kHND) {
    return TensorView::strided(data, dtype, {num_blocks, num_kv_heads, block_size, head_dim},
                               {block_stride, block_size * d, d, 1});
  }
  return TensorView::strided(data, dtype, {num_blocks, num_kv_heads, block_size, head_dim},
                             {block_stride, d, num_kv_heads * d, 1});
}

KvCacheGeometry kv_cache_geometry(const TensorView& cache, const char* what) {
  if (cache.rank != 4) {
    throw KernelError(std::string(what) + ": expected a rank-4 view [num_blocks, num_kv_heads, "
                      "block_size, head_dim], got " + cache.describe());
  }
  if (cache.stride[3] != 1) {
    throw KernelError(std::string(what) + ": head_dim must be contiguous (stride 1), got " +
                      cache.describe());
  }
  for (int d = 0; d < 4; ++d) {
    if (cache.shape[static_cast<std::size_t>(d)] < 0 ||
        cache.stride[static_cast<std::size_t>(d)] < 0) {
      throw KernelError(std::string(what) + ": negative shape or stride in " + cache.describe());
    }
  }
  for (int d = 0; d < 4; ++d) {
    if (cache.shape[static_cast<std::size_t>(d)] > INT32_MAX) {
      throw KernelError(std::string(what) + ": dimension " + std::to_string(d) +
                        " exceeds 2^31-1 in " + cache.describe());
    }
  }
  KvCacheGeometry g;
  g.num_blocks = static_cast<std::int32_t>(cache.shape[0]);
  g.num_kv_heads = static_cast<std::int32_t>(cache.shape[1]);
  g.block_size = static_cast<std::int32_t>(cache.shape[2]);
  g.head_dim = static_cast<std::int32_t>(cache.shape[3]);
  g.block_stride = cache.stride[0];
  g.head_stride = cache.stride[1];
  g.slot_stride = cache.stride[2];
  return g;
}

TensorView PackedBatch::block_table_view() const {
  return TensorView::contiguous(block_table.data(), DType::kInt32, {num_seqs, max_blocks_per_seq});
}
TensorView PackedBatch::kv_lens_view() const {
  return TensorView::contiguous(kv_lens.data(), DType::kInt32, {num_seqs});
}
TensorView PackedBatch::query_starts_view() const {
  return TensorView::contiguous(query_starts.data(), DType::kInt32, {num_seqs + 1});
}

PackedBatch pack_batch(std::span<const BatchSequence> seqs, std::int32_t block_size,
                       std::int32_t num_blocks) {
  if (block_size < 1) {
    throw KernelError("pack_batch: block_size = " + std::to_string(block_size) +
                      "; expected >= 1");
  }
  if (seqs.size() > static_cast<std::size_t>(INT32_MAX - 1)) {
    throw KernelError("pack_batch: too many sequences");
  }
  PackedBatch b;
  b.num_seqs = static_cast<std::int32_t>(seqs.size());
  std::int64_t max_blocks = 1;
  for (std::size_t s = 0; s < seqs.size(); ++s) {
    const BatchSequence& q = seqs[s];
    const std::string who = "pack_batch: sequence " + std::to_string(s);
    if (q.kv_len < 0 || q.query_len < 0 || q.query_len > q.kv_len) {
      throw KernelError(who + ": kv_len = " + std::to_string(q.kv_len) + ", query_len = " +
                        std::to_string(q.query_len) + "; expected 0 <= query_len <= kv_len");
    }
    const std::int64_t needed = (static_cast<std::int64_t>(q.kv_len) + block_size - 1) / block_size;
    if (static_cast<std::int64_t>(q.block_ids.size()) < needed) {
      throw KernelError(who + ": has " + std::to_string(q.block_ids.size()) +
                        " blocks; kv_len " + std::to_string(q.kv_len) + " needs " +
                        std::to_string(needed));
    }
    for (std::size_t i = 0; i < static_cast<std::size_t>(needed); ++i) {
      const std::int32_t id = q.block_ids[i];
      if (id < 0 || (num_blocks >= 0 && id >= num_blocks)) {
        throw KernelError(who + ": block " + std::to_string(i) + " is " + std::to_string(id) +
                          "; expected in [0, " +
                          (num_blocks >= 0 ? std::to_string(num_blocks) : "inf") + ")");
      }
    }
    max_blocks = std::max(max_blocks, needed);
  }
  b.max_blocks_per_seq = max_blocks;
  b.block_table.assign(static_cast<std::size_t>(b.num_seqs * max_blocks), -1);
  b.kv_lens.resize(seqs.size());
  b.query_starts.resize(seqs.size() + 1);
  b.query_starts[0] = 0;
  for (std::size_t s = 0; s < seqs.size(); ++s) {
    const BatchSequence& q = seqs[s];
    const std::int64_t needed = (static_cast<std::int64_t>(q.kv_len) + block_size - 1) / block_size;
    std::copy_n(q.block_ids.begin(), needed,
                b.block_table.begin() + static_cast<std::ptrdiff_t>(s) * max_blocks);
    b.kv_lens[s] = q.kv_len;
    const std::int64_t next = static_cast<std::int64_t>(b.query_starts[s]) + q.query_len;
    if (next > INT32_MAX) throw KernelError("pack_batch: more than 2^31-1 query tokens");
    b.query_starts[s + 1] = static_cast<std::int32_t>(next);
    b.max_kv_len = std::max(b.max_kv_len, q.kv_len);
    b.max_query_len = std::max(b.max_query_len, q.query_len);
    b.total_kv_tokens += q.kv_len;
  }
  b.num_query_tokens = b.query_starts.back();
  return b;
}

}  // namespace pagesim::kernels

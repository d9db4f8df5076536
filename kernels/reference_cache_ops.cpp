#include "kernels/reference_cache_ops.h"

#include <cstring>
#include <string>
#include <unordered_set>

#include "kernels/arg_check.h"
#include "kernels/kv_layout.h"

namespace pagesim::kernels {

namespace {

using detail::require;

// Copies one (block, head, slot) row of head_dim elements between two caches of one dtype.
void copy_row(const TensorView& dst, std::int64_t dst_off, const TensorView& src,
              std::int64_t src_off, std::int32_t head_dim) {
  const std::size_t elem = dtype_size(src.dtype);
  std::memcpy(static_cast<char*>(dst.data) + static_cast<std::size_t>(dst_off) * elem,
              static_cast<const char*>(src.data) + static_cast<std::size_t>(src_off) * elem,
              static_cast<std::size_t>(head_dim) * elem);
}

// Copies block src_block of (src_k, src_v) to dst_block of (dst_k, dst_v), row by row.
void copy_block(const TensorView& dst_k, const TensorView& dst_v, std::int64_t dst_block,
                const TensorView& src_k, const TensorView& src_v, std::int64_t src_block) {
  const KvCacheGeometry sg = kv_cache_geometry(src_k, "copy_block");
  const KvCacheGeometry dg = kv_cache_geometry(dst_k, "copy_block");
  for (std::int32_t h = 0; h < sg.num_kv_heads; ++h) {
    for (std::int32_t slot = 0; slot < sg.block_size; ++slot) {
      const std::int64_t so = sg.offset(src_block, h, slot);
      const std::int64_t d_off = dg.offset(dst_block, h, slot);
      copy_row(dst_k, d_off, src_k, so, sg.head_dim);
      copy_row(dst_v, d_off, src_v, so, sg.head_dim);
    }
  }
}

}  // namespace

void reference_reshape_and_cache(const ReshapeAndCacheArgs& a) {
  const char* fn = "reference_reshape_and_cache";
  const CacheOpShape shape = check_reshape_and_cache_args(a, fn, Backend::kReference);
  const KvCacheGeometry g = kv_cache_geometry(a.k_cache, fn);
  const auto* slots = a.slot_mapping.as<const std::int64_t>();
  for (std::int64_t t = 0; t < shape.count; ++t) {
    require(slots[t] < g.num_slots(), fn,
            [&] { return "slot_mapping[" + std::to_string(t) + "] = " + std::to_string(slots[t]) +
                " exceeds the cache's " + std::to_string(g.num_slots()) + " slots"; });
  }
  for (std::int64_t t = 0; t < shape.count; ++t) {
    if (slots[t] < 0) continue;
    const std::int64_t block = slots[t] / g.block_size;
    const std::int64_t slot = slots[t] % g.block_size;
    for (std::int32_t h = 0; h < g.num_kv_heads; ++h) {
      const std::int64_t dst = g.offset(block, h, slot);
      copy_row(a.k_cache, dst, a.key, t * a.key.stride[0] + h * a.key.stride[1], g.head_dim);
      copy_row(a.v_cache, dst, a.value, t * a.value.stride[0] + h * a.value.stride[1], g.head_dim);
    }
  }
}

void reference_copy_blocks(const CopyBlocksArgs& a) {
  const char* fn = "reference_copy_blocks";
  const CacheOpShape shape = check_copy_blocks_args(a, fn, Backend::kReference);
  const KvCacheGeometry g = kv_cache_geometry(a.k_cache, fn);
  const auto* p = a.block_pairs.as<const std::int32_t>();
  std::unordered_set<std::int32_t> srcs, dsts;
  for (std::int64_t i = 0; i < shape.count; ++i) {
    require(p[2 * i] >= 0 && p[2 * i] < g.num_blocks && p[2 * i + 1] >= 0 &&
                p[2 * i + 1] < g.num_blocks,
            fn, [&] { return "block_pairs[" + std::to_string(i) + "] is out of range [0, " +
                    std::to_string(g.num_blocks) + ")"; });
    srcs.insert(p[2 * i]);
    require(dsts.insert(p[2 * i + 1]).second, fn,
            [&] { return "block " + std::to_string(p[2 * i + 1]) + " is a destination twice"; });
  }
  for (std::int32_t d : dsts) {
    require(!srcs.contains(d), fn, [&] { return "block " + std::to_string(d) + " is both a source and a destination"; });
  }
  for (std::int64_t i = 0; i < shape.count; ++i) {
    copy_block(a.k_cache, a.v_cache, p[2 * i + 1], a.k_cache, a.v_cache, p[2 * i]);
  }
}

void reference_swap_blocks(const SwapBlocksArgs& a) {
  const CacheOpShape shape = check_swap_blocks_args(a, "reference_swap_blocks", Backend::kReference);
  const auto* p = a.block_pairs.as<const std::int32_t>();
  for (std::int64_t i = 0; i < shape.count; ++i) {
    copy_block(a.dst_k_cache, a.dst_v_cache, p[2 * i + 1], a.src_k_cache, a.src_v_cache, p[2 * i]);
  }
}

}  // namespace pagesim::kernels

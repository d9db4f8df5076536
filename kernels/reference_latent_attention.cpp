#include "kernels/reference_latent_attention.h"

#include <cstdint>
#include <vector>

#include "kernels/element_access.h"
#include "kernels/kv_layout.h"
#include "kernels/reference_attention.h"

namespace pagesim::kernels {

void reference_latent_attention(const LatentAttentionArgs& a) {
  const char* fn = "reference_latent_attention";
  const LatentShape s = check_latent_attention_args(a, fn, Backend::kReference);
  const KvCacheGeometry g = kv_cache_geometry(a.latent_cache, fn);
  // The cache widened to f32 in the kHND layout of its geometry (one head: row-major slots).
  const std::int64_t slots = static_cast<std::int64_t>(g.num_blocks) * g.block_size;
  std::vector<float> cache(static_cast<std::size_t>(std::max<std::int64_t>(slots * s.latent_dim, 1)));
  const double cache_scale = a.cache_scale;
  std::vector<double> row(static_cast<std::size_t>(s.latent_dim));
  for (std::int64_t b = 0; b < g.num_blocks; ++b) {
    for (std::int64_t t = 0; t < g.block_size; ++t) {
      load_elements(a.latent_cache, g.offset(b, 0, t), s.latent_dim, row.data());
      float* dst = cache.data() + (b * g.block_size + t) * s.latent_dim;
      for (std::int32_t x = 0; x < s.latent_dim; ++x) dst[x] = static_cast<float>(row[static_cast<std::size_t>(x)] * cache_scale);
    }
  }
  const TensorView cache_view = TensorView::contiguous(cache.data(), DType::kFloat32,
                                                       {g.num_blocks, 1, g.block_size, s.latent_dim});
  std::vector<float> wide(static_cast<std::size_t>(std::max<std::int64_t>(
      static_cast<std::int64_t>(s.num_query_tokens) * s.num_heads * s.latent_dim, 1)));
  PagedAttentionArgs p;
  p.query = a.query;
  p.out = TensorView::contiguous(wide.data(), DType::kFloat32, {s.num_query_tokens, s.num_heads, s.latent_dim});
  p.k_cache = cache_view;
  p.v_cache = cache_view;
  p.block_table = a.block_table;
  p.kv_lens = a.kv_lens;
  p.query_starts = a.query_starts;
  p.scale = a.scale;
  reference_paged_attention(p);
  for (std::int64_t q = 0; q < s.num_query_tokens; ++q) {
    for (std::int64_t h = 0; h < s.num_heads; ++h) {
      const float* src = wide.data() + (q * s.num_heads + h) * s.latent_dim;
      const std::int64_t base = q * a.out.stride[0] + h * a.out.stride[1];
      for (std::int32_t x = 0; x < s.value_dim; ++x) store_element(a.out, base + x, src[x]);
    }
  }
}

}  // namespace pagesim::kernels

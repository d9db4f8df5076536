#include "sim/cost/cuda_graph_sizes.h"

#include <algorithm>
#include <cassert>

namespace pagesim::sim {

CudaGraphSizes CudaGraphSizes::vllm_default(std::int64_t max_size, std::int64_t max_num_batched_tokens) {
  CudaGraphSizes out;
  std::int64_t max = max_size;
  if (max_num_batched_tokens > 0) max = std::min(max, max_num_batched_tokens);
  if (max <= 0) return out;
  for (std::int64_t s : {1, 2, 4})
    if (s <= max) out.sizes_.push_back(s);
  if (max >= 8)
    for (std::int64_t s = 8; s < std::min<std::int64_t>(max + 1, 256); s += 8) out.sizes_.push_back(s);
  if (max >= 256)
    for (std::int64_t s = 256; s <= max; s += 16) out.sizes_.push_back(s);
  return out;
}

std::int64_t CudaGraphSizes::vllm_default_max_size(std::int64_t max_num_seqs) {
  return std::min<std::int64_t>(max_num_seqs * 2, 512);
}

std::int64_t CudaGraphSizes::padded_tokens(std::int64_t tokens) const {
  assert(tokens >= 0);
  if (tokens == 0 || sizes_.empty() || tokens > sizes_.back()) return tokens;
  return *std::lower_bound(sizes_.begin(), sizes_.end(), tokens);
}

}  // namespace pagesim::sim

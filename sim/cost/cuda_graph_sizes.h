// CudaGraphSizes: the batch sizes vLLM V1 captures CUDA graphs for, and the padding of a
// batch's token count to one of them.
//
// vLLM (v0.14.1 and v0.16.0 alike, so the v0.15.1 of pagesim's measured runs between them)
// captures, unless the user lists sizes, VllmConfig._set_cudagraph_sizes (vllm/config/vllm.py):
//   max = min(max_num_seqs · 2, 512), then max = min(max_num_batched_tokens, max)
//   sizes = [1, 2, 4] (those <= max) + range(8, min(max + 1, 256), 8)
//           + range(256, max + 1, 16) when max >= 256
// and the largest size becomes max_cudagraph_capture_size. At run time
// CudagraphDispatcher.dispatch (vllm/v1/cudagraph_dispatcher.py) runs a batch of N tokens
// eagerly when N > that largest size, else replays the graph of the smallest captured size
// >= N (_compute_bs_to_padded_graph_size): FULL graphs for uniform decode batches, PIECEWISE
// ones (attention eager, everything else in the graph) for mixed batches, since the default
// cudagraph_mode is FULL_AND_PIECEWISE. The padded tokens go through every GEMM, the MoE and
// the all-reduces as real ones.
// A plain value type; padded_tokens is a binary search, no allocation.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace pagesim::sim {

class CudaGraphSizes {
 public:
  // No graphs: every batch runs eagerly at its own size.
  CudaGraphSizes() = default;
  // vLLM's default sizes up to `max_size` (<= 0: none), capped at max_num_batched_tokens
  // (<= 0: no cap), as _set_cudagraph_sizes makes them.
  static CudaGraphSizes vllm_default(std::int64_t max_size, std::int64_t max_num_batched_tokens);
  // vLLM's default max_size for a scheduler of max_num_seqs: min(2 · max_num_seqs, 512).
  static std::int64_t vllm_default_max_size(std::int64_t max_num_seqs);

  // Tokens the forward pass computes for a batch of `tokens`: the smallest captured size >=
  // tokens, or tokens itself above the largest size (eager) or without graphs.
  // REQUIRES: tokens >= 0.
  std::int64_t padded_tokens(std::int64_t tokens) const;
  // The largest captured size; 0 without graphs.
  std::int64_t max_size() const { return sizes_.empty() ? 0 : sizes_.back(); }
  std::span<const std::int64_t> sizes() const { return sizes_; }

 private:
  std::vector<std::int64_t> sizes_;  // ascending
};

}  // namespace pagesim::sim

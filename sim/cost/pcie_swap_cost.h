// PcieSwapCost: the time to copy KV blocks between GPU and CPU memory over PCIe, shared by the
// cost models that price swaps from datasheet numbers (roofline, operators).
//
// Each GPU copies its share of the KV over its own PCIe link, in parallel with the others:
//   blocks · block_size · (KV bytes per token per GPU) / pcie_bytes_per_s
//   + blocks · swap_block_overhead_seconds
// (vLLM issues one copy per block per layer for K and for V: the per-block term is their
// launch cost, GpuSpec::swap_block_overhead_seconds). A plain value type.
#pragma once

#include <cassert>
#include <cstdint>

#include "sim/cost/gpu_spec.h"
#include "sim/cost/model_spec.h"

namespace pagesim::sim {

struct PcieSwapCost {
  double seconds_per_token = 0;  // KV bytes of one token on one GPU / PCIe bytes per second
  double seconds_per_block = 0;  // fixed cost of one swapped block

  // REQUIRES: model.check_tensor_parallel(tp) passes, gpu.validate() passes.
  static PcieSwapCost of(const ModelSpec& model, const GpuSpec& gpu, int tp) {
    return {static_cast<double>(model.kv_bytes_per_token_per_gpu(tp)) / gpu.pcie_bytes_per_s,
            gpu.swap_block_overhead_seconds};
  }

  // Seconds to copy `blocks` blocks of `block_size` tokens one way. REQUIRES: blocks >= 0,
  // block_size >= 1.
  double seconds(std::int64_t blocks, std::int64_t block_size) const {
    assert(blocks >= 0 && block_size >= 1);
    const double n = static_cast<double>(blocks);
    return n * static_cast<double>(block_size) * seconds_per_token + n * seconds_per_block;
  }
};

}  // namespace pagesim::sim

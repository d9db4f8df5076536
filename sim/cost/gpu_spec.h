// GpuSpec: the numbers of one accelerator that the roofline cost model and the KV-capacity
// derivation need.
//
// Peaks (memory size, FLOP/s, HBM, NVLink bandwidth) are datasheet values and fixed per
// preset (presets.h). The efficiency factors and overheads are tunable settings, not fitted
// constants: they say what fraction of a peak real kernels reach and what an iteration costs
// beyond its kernels. Their defaults sit together in gpu_defaults below, with the reasoning.
// A plain value type.
#pragma once

#include <cstdint>
#include <string>

namespace pagesim::sim {

namespace gpu_defaults {
// Large fp16 GEMMs reach about 70-80% of the dense tensor-core peak; 0.7 also covers the
// smaller, less efficient matmuls of attention and mid-size batches.
inline constexpr double kComputeEfficiency = 0.7;
// Streaming kernels (weight reads at small batch, paged-attention KV reads) reach about
// 80-90% of the HBM peak; 0.8 leaves room for the paged gather.
inline constexpr double kMemoryEfficiency = 0.8;
// Ring all-reduce reaches about 70% of the per-direction NVLink peak on large messages.
inline constexpr double kNvlinkEfficiency = 0.7;
// Host work and kernel launches per iteration (scheduling, input preparation, sampling): an
// assumption, not a measurement; the experiments set it when they calibrate.
inline constexpr double kIterationOverheadSeconds = 1.0e-3;
// Fixed cost of one all-reduce (launch + synchronisation), paid twice per layer under TP.
inline constexpr double kAllreduceLatencySeconds = 1.0e-5;
// Fixed cost per swapped block: vLLM issues one copy per block per layer for K and for V;
// launch costs of those copies, an assumption.
inline constexpr double kSwapBlockOverheadSeconds = 2.0e-5;
}  // namespace gpu_defaults

struct GpuSpec {
  std::string name;                  // e.g. "a100-40gb"; used in describe() and errors
  std::int64_t hbm_bytes = 0;        // device memory as the runtime reports it (bytes)
  std::int64_t cuda_total_bytes = 0;  // total memory cudaMemGetInfo reports, what vLLM's
                                      // gpu_memory_utilization multiplies (bytes; below
                                      // hbm_bytes by the driver's reservation); 0 = hbm_bytes
  double peak_flops = 0;             // dense fp16/bf16 tensor-core peak (FLOP/s)
  double hbm_bytes_per_s = 0;        // peak HBM bandwidth (bytes/s)
  double pcie_bytes_per_s = 0;       // effective host<->device copy bandwidth, one direction,
                                     // already below the link peak (bytes/s)
  double nvlink_bytes_per_s = 0;     // NVLink peak per GPU, one direction (bytes/s)
  double compute_efficiency = gpu_defaults::kComputeEfficiency;  // fraction of peak_flops
  double memory_efficiency = gpu_defaults::kMemoryEfficiency;    // fraction of hbm_bytes_per_s
  double nvlink_efficiency = gpu_defaults::kNvlinkEfficiency;    // fraction of nvlink_bytes_per_s
  double iteration_overhead_seconds = gpu_defaults::kIterationOverheadSeconds;  // per iteration
  double allreduce_latency_seconds = gpu_defaults::kAllreduceLatencySeconds;    // per all-reduce
  double swap_block_overhead_seconds = gpu_defaults::kSwapBlockOverheadSeconds;  // per block
  std::int32_t compute_capability = 0;  // SM major · 10 + minor (A100 80, H100/H200 90); 0 =
                                        // unknown. Engines pick kernels, and so buffers, by it

  // Achieved rates: peak × efficiency (FLOP/s, bytes/s).
  double achieved_flops() const { return peak_flops * compute_efficiency; }
  double achieved_hbm_bytes_per_s() const { return hbm_bytes_per_s * memory_efficiency; }
  double achieved_nvlink_bytes_per_s() const { return nvlink_bytes_per_s * nvlink_efficiency; }

  // Throws CostModelError naming the first field out of range: sizes and peaks must be
  // positive and finite (cuda_total_bytes >= 0), efficiencies in (0, 1], overheads finite and >= 0.
  void validate() const;
};

}  // namespace pagesim::sim

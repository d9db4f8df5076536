// Spec-sheet peaks of the GPUs the kernels are measured on, to print beside measured values.
// Targets are judged against measurements (copy bandwidth of the same run) or against
// these peaks; a device not listed has no peak (0) and its peak-relative columns stay empty.
//
// Sources (dense, i.e. without 2:4 sparsity, which halves NVIDIA's headline tensor numbers):
//   H200 SXM / NVL: NVIDIA H200 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/h200):
//     4.8 TB/s HBM3e; FP16/BF16 tensor 1,979 TFLOPS (SXM) / 1,671 (NVL) with sparsity.
//   H100 SXM / PCIe: NVIDIA H100 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/h100):
//     3.35 / 2.0 TB/s; FP16/BF16 tensor 1,979 / 1,513 TFLOPS with sparsity.
//   A100 80GB SXM: NVIDIA A100 datasheet (nvidia.com/en-us/data-center/a100): 2,039 GB/s;
//     FP16/BF16 tensor 312 TFLOPS dense.
#pragma once

#include <string_view>

namespace pagesim::bench {

struct DevicePeaks {
  const char* label = "";          // which spec sheet row matched
  double hbm_tbps = 0;             // memory bandwidth, TB/s (10^12 bytes/s)
  double fp16_dense_tflops = 0;    // dense fp16/bf16 tensor-core peak, TFLOP/s
};

// The peaks of the device named `name` (cudaDeviceProp::name, e.g. "NVIDIA H200"); a zero
// record for an unknown device. Longer names first: "H200 NVL" before "H200".
inline DevicePeaks spec_peaks(std::string_view name) {
  struct Entry {
    std::string_view key;
    DevicePeaks peaks;
  };
  static constexpr Entry kTable[] = {
      {"H200 NVL", {"H200 NVL", 4.8, 1671.0 / 2}},
      {"H200", {"H200 SXM", 4.8, 1979.0 / 2}},
      {"H100 PCIe", {"H100 PCIe", 2.0, 1513.0 / 2}},
      {"H100", {"H100 SXM", 3.35, 1979.0 / 2}},
      {"A100-SXM4-80GB", {"A100 80GB SXM", 2.039, 312}},
  };
  for (const Entry& e : kTable) {
    if (name.find(e.key) != std::string_view::npos) return e.peaks;
  }
  return {};
}

}  // namespace pagesim::bench

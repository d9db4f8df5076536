#include "sim/cost/gpu_spec.h"

#include <cmath>

#include <fmt/format.h>

#include "sim/cost/cost_error.h"

namespace pagesim::sim {

void GpuSpec::validate() const {
  if (hbm_bytes <= 0) {
    throw CostModelError(
        fmt::format("gpu '{}': hbm_bytes is {}, expected a positive size", name, hbm_bytes));
  }
  if (cuda_total_bytes < 0) {
    throw CostModelError(
        fmt::format("gpu '{}': cuda_total_bytes is {}, expected >= 0 (0 = hbm_bytes)", name, cuda_total_bytes));
  }
  const struct {
    const char* field;
    double value;
  } rates[] = {{"peak_flops", peak_flops},
               {"hbm_bytes_per_s", hbm_bytes_per_s},
               {"pcie_bytes_per_s", pcie_bytes_per_s},
               {"nvlink_bytes_per_s", nvlink_bytes_per_s}};
  for (const auto& r : rates) {
    if (!(std::isfinite(r.value) && r.value > 0)) {
      throw CostModelError(
          fmt::format("gpu '{}': {} is {}, expected a positive rate", name, r.field, r.value));
    }
  }
  const struct {
    const char* field;
    double value;
  } fractions[] = {{"compute_efficiency", compute_efficiency},
                   {"memory_efficiency", memory_efficiency},
                   {"nvlink_efficiency", nvlink_efficiency}};
  for (const auto& f : fractions) {
    if (!(f.value > 0 && f.value <= 1)) {
      throw CostModelError(
          fmt::format("gpu '{}': {} is {}, expected a fraction in (0, 1]", name, f.field, f.value));
    }
  }
  const struct {
    const char* field;
    double value;
  } overheads[] = {{"iteration_overhead_seconds", iteration_overhead_seconds},
                   {"allreduce_latency_seconds", allreduce_latency_seconds},
                   {"swap_block_overhead_seconds", swap_block_overhead_seconds}};
  for (const auto& o : overheads) {
    if (!(std::isfinite(o.value) && o.value >= 0)) {
      throw CostModelError(
          fmt::format("gpu '{}': {} is {}, expected seconds >= 0", name, o.field, o.value));
    }
  }
}

}  // namespace pagesim::sim

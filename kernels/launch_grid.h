// LaunchGrid: the grid of one CUDA kernel launch, computed on the host in 64 bits so that an
// oversized grid is reported by name before anything runs, instead of wrapping or failing
// at launch after an earlier kernel of the same call already ran.
//
// Limits (CUDA programming guide, "Features and Technical Specifications", compute
// capability >= 3.0): grid.x <= 2^31 - 1, grid.y and grid.z <= 65535. Pure host code;
// the planners (decode_plan.h, prefill_plan.h) and the launchers use the same checks.
#pragma once

#include <cstdint>

namespace pagesim::kernels {

struct LaunchGrid {
  std::int64_t x = 1;
  std::int64_t y = 1;
  std::int64_t z = 1;

  std::int64_t ctas() const { return x * y * z; }
  bool operator==(const LaunchGrid&) const = default;
};

namespace limits {
inline constexpr std::int64_t kMaxGridX = 2147483647;  // 2^31 - 1
inline constexpr std::int64_t kMaxGridYZ = 65535;
}  // namespace limits

// True if every dimension is in [1, its limit].
constexpr bool grid_fits(const LaunchGrid& g) {
  return g.x >= 1 && g.x <= limits::kMaxGridX && g.y >= 1 && g.y <= limits::kMaxGridYZ && g.z >= 1 &&
         g.z <= limits::kMaxGridYZ;
}

// Throws KernelError "<fn>: <kernel> needs grid (x, y, z); CUDA allows ..." unless the grid
// fits. Builds no string when it does.
void check_launch_grid(const LaunchGrid& grid, const char* fn, const char* kernel);

}  // namespace pagesim::kernels

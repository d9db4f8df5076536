#include "kernels/launch_grid.h"

#include <string>

#include "kernels/arg_check.h"

namespace pagesim::kernels {

void check_launch_grid(const LaunchGrid& g, const char* fn, const char* kernel) {
  detail::require(grid_fits(g), fn, [&] {
    return std::string(kernel) + " needs grid (" + std::to_string(g.x) + ", " + std::to_string(g.y) + ", " +
           std::to_string(g.z) + "); CUDA allows x in [1, " + std::to_string(limits::kMaxGridX) +
           "] and y, z in [1, " + std::to_string(limits::kMaxGridYZ) + "]";
  });
}

}  // namespace pagesim::kernels

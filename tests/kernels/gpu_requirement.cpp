#include "gpu_requirement.h"

#include <string_view>

namespace pagesim::kernels::testing {

NoGpuAction no_gpu_action(const char* require_gpu_value) {
  if (require_gpu_value == nullptr) return NoGpuAction::kSkip;
  const std::string_view v(require_gpu_value);
  return v.empty() || v == "0" ? NoGpuAction::kSkip : NoGpuAction::kFail;
}

}  // namespace pagesim::kernels::testing

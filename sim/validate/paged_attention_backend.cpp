#include "sim/validate/paged_attention_backend.h"

#include <fmt/format.h>

namespace pagesim::sim {

ValidateDevice parse_validate_device(std::string_view name, std::string_view what) {
  if (name == "cpu") return ValidateDevice::kCpu;
  if (name == "cuda") return ValidateDevice::kCuda;
  throw ValidateError(fmt::format("{}: unknown device '{}', expected cpu or cuda", what, name));
}

const char* validate_device_name(ValidateDevice d) { return d == ValidateDevice::kCuda ? "cuda" : "cpu"; }

const PagedAttentionBackend& PagedAttentionBackends::get(ValidateDevice device) const {
  if (device == ValidateDevice::kCuda) {
    if (cuda == nullptr) {
      throw ValidateError(
          "device cuda: this pagesim was built without CUDA (nvcc not found or PAGESIM_ENABLE_CUDA=OFF); "
          "use --device cpu");
    }
    return *cuda;
  }
  if (cpu == nullptr) throw ValidateError("device cpu: this program was given no CPU backend");
  return *cpu;
}

}  // namespace pagesim::sim

// What a GPU test does when no CUDA device is usable. On development machines and in CI it
// skips with a message; on the GPU machine gpu_run.sh sets PAGESIM_REQUIRE_GPU=1 so that a
// missing or broken driver fails every GPU test instead of letting the run pass by skipping.
// Plain C++ (no CUDA), so the switch itself is tested everywhere. Stateless.
#pragma once

namespace pagesim::kernels::testing {

enum class NoGpuAction { kSkip, kFail };

// The name of the environment variable read by PAGESIM_REQUIRE_GPU() (gpu_test_support.h).
inline constexpr const char* kRequireGpuEnv = "PAGESIM_REQUIRE_GPU";

// From the variable's value (null when unset): unset, "" or "0" skip; any other value
// ("1") fails, so a typo errs on the side of not passing silently.
NoGpuAction no_gpu_action(const char* require_gpu_value);

}  // namespace pagesim::kernels::testing

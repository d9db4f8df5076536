// The "no device" switch of the GPU tests: skip by default, fail under PAGESIM_REQUIRE_GPU.
#include "gpu_requirement.h"

#include <gtest/gtest.h>

namespace pagesim::kernels::testing {
namespace {

TEST(GpuRequirement, UnsetEmptyOrZeroSkips) {
  EXPECT_EQ(no_gpu_action(nullptr), NoGpuAction::kSkip);
  EXPECT_EQ(no_gpu_action(""), NoGpuAction::kSkip);
  EXPECT_EQ(no_gpu_action("0"), NoGpuAction::kSkip);
}

TEST(GpuRequirement, OneOrAnyOtherValueFails) {
  EXPECT_EQ(no_gpu_action("1"), NoGpuAction::kFail);
  EXPECT_EQ(no_gpu_action("yes"), NoGpuAction::kFail);
  EXPECT_EQ(no_gpu_action("00"), NoGpuAction::kFail);
}

TEST(GpuRequirement, TheVariableIsTheOneGpuRunShSets) {
  EXPECT_STREQ(kRequireGpuEnv, "PAGESIM_REQUIRE_GPU");
}

}  // namespace
}  // namespace pagesim::kernels::testing

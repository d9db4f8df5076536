// `pagesim run --ray` hands over to this build's Python package only when its compiled module
// is there: a build of `pagesim` alone (README command 1 before pagesim built its module)
// holds the package's Python files without pagesim._core, and importing that copy failed with
// "cannot import name '_core' from partially initialized module 'pagesim'".
#include "sim/cli/ray_handoff.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "temp_dir_test.h"

namespace pagesim::sim::cli {
namespace {

using RayHandoff = testing::TempDirTest;

TEST_F(RayHandoff, BuildPackageCountsOnlyWithItsCompiledModule) {
  EXPECT_FALSE(has_compiled_module(""));
  EXPECT_FALSE(has_compiled_module(dir_ / "missing"));
  std::filesystem::create_directories(dir_ / "pagesim");
  std::ofstream(dir_ / "pagesim/__init__.py") << "from . import _core\n";
  std::ofstream(dir_ / "pagesim/_core.pyi") << "\n";
  EXPECT_FALSE(has_compiled_module(dir_));
  std::ofstream(dir_ / "pagesim/_core.cpython-311-x86_64-linux-gnu.so") << "";
  EXPECT_TRUE(has_compiled_module(dir_));
}

}  // namespace
}  // namespace pagesim::sim::cli

// `pagesim profile` without a GPU: option errors are one line and write nothing; without CUDA
// in the build or without a device the command exits 1 with a clear message. (The GPU run
// itself is not a unit test: it takes minutes and is done by hand on the GPU machine.)
#include "sim/profile/profile_command.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "sim/cost/cost_error.h"

namespace pagesim::sim {
namespace {

struct Result {
  int status = -1;
  std::string out, err;
};

Result run(const ProfileOptions& o) {
  std::ostringstream out, err;
  Result r;
  r.status = run_profile_command(o, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

std::filesystem::path temp_csv(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("pagesim_profile_cmd_" + name + "_" + std::to_string(::getpid()) + ".csv");
}

TEST(ProfileCommand, OptionErrorsAreOneLine) {
  struct Case {
    ProfileOptions options;
    std::string expected;
  };
  std::vector<Case> cases;
  ProfileOptions o;
  o.model = "opt-13b";
  o.out = temp_csv("errors");
  Case c{o, ""};
  c.options.device = "cpu";
  c.expected = "--device: 'cpu' is not supported";
  cases.push_back(c);
  c = {o, "--model: a model preset is required, one of: opt-13b"};
  c.options.model = "";
  cases.push_back(c);
  c = {o, "unknown model preset 'gpt-5'"};
  c.options.model = "gpt-5";
  cases.push_back(c);
  c = {o, "--repeats: at least 20 timed runs per point, got 5"};
  c.options.repeats = 5;
  cases.push_back(c);
  c = {o, "--warmup must be >= 0"};
  c.options.warmup = -1;
  cases.push_back(c);
  c = {o, "--operator-tables: /nonexistent/tables is not a folder"};
  c.options.operator_tables = "/nonexistent/tables";
  cases.push_back(c);
  c = {o, "--operators-out: " + o.out.string() + " is also --out"};
  c.options.operators_out = o.out;
  cases.push_back(c);
  c = {o, "block_size must be a power of two in [1, 1024], got 24"};
  c.options.grid.block_size = 24;
  cases.push_back(c);
  for (const Case& k : cases) {
    const Result r = run(k.options);
    EXPECT_EQ(r.status, 1) << k.expected;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(k.expected), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
    EXPECT_FALSE(std::filesystem::exists(o.out));
  }
}

TEST(ProfileCommand, PlanWithoutAGpu) {
  ProfileOptions o;
  o.model = "llama-3-8b";
  const ProfilePlan p = plan_profile(o);
  EXPECT_EQ(p.model.name, "llama-3-8b");
  EXPECT_EQ(p.out, std::filesystem::path("profile-llama-3-8b.csv"));
  EXPECT_GT(p.grid.num_points(), 100u);
  EXPECT_EQ(p.operators_out, std::filesystem::path("profile-llama-3-8b-operators.csv"));
  EXPECT_EQ(p.operator_check_skip, "");
  o.model = "llama-2-7b";
  o.out = "/tmp/x/llama.csv";
  EXPECT_EQ(plan_profile(o).operators_out, std::filesystem::path("/tmp/x/llama-operators.csv"));
  o.model = "mixtral-8x7b";  // MoE layers: a moe part, and the operator check covers it
  o.out = "";
  const ProfilePlan moe = plan_profile(o);
  EXPECT_EQ(moe.grid.moe_tokens, moe.grid.linear_tokens);
  EXPECT_EQ(moe.operator_check_skip, "");
  o.model = "gpt-oss-120b";  // MXFP4 experts: refused before any device work
  EXPECT_THROW(plan_profile(o), CostModelError);
}

TEST(ProfileCommand, WithoutCudaOrDeviceExitsOneAndWritesNothing) {
  std::string why;
  if (profile_device_available(&why)) GTEST_SKIP() << "a CUDA device is present: the command would profile it";
  ProfileOptions o;
  o.model = "opt-13b";
  o.out = temp_csv("nodevice");
  const Result r = run(o);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(profile_has_cuda() ? "no usable CUDA device" : "built without CUDA"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(why), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(o.out));
}

}  // namespace
}  // namespace pagesim::sim

// Input paths (sim/config/input_path.h): a relative path is looked up in the experiment's
// folder, then the bundled data (traces/data/, then the source tree); a found file is kept
// relative to the source tree when inside it, else absolute; input_file() opens it again from
// any working directory; a missing file the run reads is an error on its key.
#include "sim/config/input_path.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <yaml-cpp/yaml.h>

#include "sim/config/config_error.h"
#include "sim/config/experiment_config.h"
#include "temp_dir_test.h"

namespace pagesim::sim {
namespace {

namespace fs = std::filesystem;
const fs::path kSource = fs::path(PAGESIM_SOURCE_DIR).lexically_normal();

using InputPath = testing::TempDirTest;

TEST_F(InputPath, LooksInTheExperimentsFolderThenTheBundledData) {
  EXPECT_EQ(bundled_root(), kSource);
  std::ofstream(dir_ / "mine.csv") << "x\n";
  // Beside the experiment: absolute (outside the source tree).
  EXPECT_EQ(find_input("mine.csv", dir_, InputKind::kFile), (dir_ / "mine.csv").generic_string());
  // The bundled data, by the path the bundled experiments write and by its file name alone.
  EXPECT_EQ(find_input("traces/data/sharegpt_opt_lengths.csv", dir_, InputKind::kFile),
            "traces/data/sharegpt_opt_lengths.csv");
  EXPECT_EQ(find_input("sharegpt_opt_lengths.csv", dir_, InputKind::kFile), "traces/data/sharegpt_opt_lengths.csv");
  // Inside the source tree, found from its own folder: relative to the tree.
  EXPECT_EQ(find_input("../../traces/data/azure2023_conv.csv", kSource / "experiments/vllm_paper", InputKind::kFile),
            "traces/data/azure2023_conv.csv");
  // The experiment's folder wins over the bundled data.
  std::ofstream(dir_ / "sharegpt_opt_lengths.csv") << "x\n";
  EXPECT_EQ(find_input("sharegpt_opt_lengths.csv", dir_, InputKind::kFile),
            (dir_ / "sharegpt_opt_lengths.csv").generic_string());
  // Absolute paths are used as they are; folders are found only as folders.
  EXPECT_EQ(find_input((dir_ / "mine.csv").string(), kSource, InputKind::kFile), (dir_ / "mine.csv").generic_string());
  EXPECT_EQ(find_input("nope.csv", dir_, InputKind::kFile), std::nullopt);
  EXPECT_EQ(find_input("sim/cost/operator_tables", dir_, InputKind::kFolder), "sim/cost/operator_tables");
  EXPECT_EQ(find_input("sim/cost/operator_tables", dir_, InputKind::kFile), std::nullopt);
}

TEST_F(InputPath, InputFileOpensThePortableFormFromAnyFolder) {
  EXPECT_EQ(input_file("traces/data/sharegpt_opt_lengths.csv"), kSource / "traces/data/sharegpt_opt_lengths.csv");
  EXPECT_EQ(input_file("/abs/x.csv"), fs::path("/abs/x.csv"));
  EXPECT_EQ(input_file("not/in/the/tree.csv"), fs::path("not/in/the/tree.csv"));  // a config made in code
  EXPECT_EQ(input_file(""), fs::path());
}

TEST_F(InputPath, ExperimentDirIsTheFilesFolderElseTheWorkingDirectory) {
  std::ofstream(dir_ / "exp.yaml") << "name: x\n";
  EXPECT_EQ(experiment_dir((dir_ / "exp.yaml").string()), dir_);
  EXPECT_EQ(experiment_dir("<dict>"), fs::current_path());
  EXPECT_EQ(experiment_dir(""), fs::current_path());
}

// Issue 41: an experiment named without a folder ("e.yaml") printed its folder as "" in the
// message of a missing input ("not in , /.../traces/data").
TEST_F(InputPath, AFileInTheWorkingDirectoryNamesThatFolder) {
  std::ofstream(dir_ / "exp.yaml") << "name: x\n";
  const fs::path before = fs::current_path();
  fs::current_path(dir_);
  const fs::path base = experiment_dir("exp.yaml");
  const std::string message = input_not_found("nope.csv", base, InputKind::kFile);
  fs::current_path(before);
  EXPECT_EQ(base, dir_);
  EXPECT_EQ(message.find("not in , "), std::string::npos) << message;
  EXPECT_NE(message.find("not in " + base.string() + ", "), std::string::npos) << message;
}

TEST_F(InputPath, ParsingResolvesThePathsTheRunReads) {
  std::ofstream(dir_ / "trace.csv") << "arrival_s,prompt_tokens,output_tokens\n0,10,10\n";
  const std::string file = (dir_ / "exp.yaml").string();
  std::ofstream(file) << "\n";
  ExperimentConfig c = parse_experiment(YAML::Load("workload: {kind: trace, trace: {path: trace.csv}}"), file);
  EXPECT_EQ(c.workload.trace.path, (dir_ / "trace.csv").generic_string());
  c = parse_experiment(
      YAML::Load("workload: {lengths: {kind: cycle_shuffle, path: traces/data/sharegpt_opt_lengths.csv}}"), file);
  EXPECT_EQ(c.workload.lengths.path, "traces/data/sharegpt_opt_lengths.csv");
  // A path no folder holds stays as written; the run refuses it only where it reads it.
  c = parse_experiment(YAML::Load("workload: {trace: {path: nope.csv}}"), file);
  EXPECT_EQ(c.workload.trace.path, "nope.csv");
  EXPECT_NO_THROW(check_input_paths(c));
  try {
    check_input_paths(parse_experiment(YAML::Load("workload:\n  kind: trace\n  trace: {path: nope.csv}\n"), file));
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "workload.trace.path");
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(e.message(), "expected an existing file, found 'nope.csv': not in " + dir_.string() + ", " +
                               (kSource / "traces/data").string() + " and " + kSource.string() +
                               " (a relative path is looked up in the experiment file's folder, or the working "
                               "directory for a --set value, then in pagesim's bundled data)");
  }
  try {
    check_input_paths(parse_experiment(YAML::Load("cost: {kind: profile, profile: nope.csv}"), file));
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "cost.profile");
  }
}

// An installed package's data (pip install .: <pkg>/data, named by PAGESIM_DATA_DIR, which its
// `pagesim` command and `import pagesim` set) replaces the source tree as the bundled data.
TEST_F(InputPath, AnInstalledPackagesDataIsTheBundledData) {
  const fs::path data = dir_ / "pkg" / "data";
  fs::create_directories(data / "traces/data");
  std::ofstream(data / "traces/data/only_installed.csv") << "x\n";
  fs::create_directories(dir_ / "exp");
  ASSERT_EQ(::setenv("PAGESIM_DATA_DIR", data.c_str(), 1), 0);
  EXPECT_EQ(bundled_root(), data);
  EXPECT_EQ(find_input("only_installed.csv", dir_ / "exp", InputKind::kFile), "traces/data/only_installed.csv");
  EXPECT_EQ(input_file("traces/data/only_installed.csv"), data / "traces/data/only_installed.csv");
  EXPECT_EQ(find_input("sharegpt_opt_lengths.csv", dir_ / "exp", InputKind::kFile), std::nullopt);  // not the tree's
  ASSERT_EQ(::unsetenv("PAGESIM_DATA_DIR"), 0);
  EXPECT_EQ(bundled_root(), kSource);
  EXPECT_EQ(find_input("only_installed.csv", dir_ / "exp", InputKind::kFile), std::nullopt);
}

}  // namespace
}  // namespace pagesim::sim

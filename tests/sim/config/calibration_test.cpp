// Calibration files: an experiment naming one takes its values for the keys it leaves out;
// its own keys and --set win; `none` names no file; bad files are errors naming the cause.
#include "sim/config/calibration.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "sim/config/config_error.h"
#include "sim/config/experiment_config.h"

namespace pagesim::sim {
namespace {

namespace fs = std::filesystem;

class CalibrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("pagesim-calibration-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  fs::path dir_;
};

TEST_F(CalibrationTest, FillsOnlyTheKeysTheExperimentLeavesOut) {
  const std::string cal = write("cal.yaml",
                                "values:\n  kv.gpu_memory_utilization: 0.8\n  scheduler.max_num_seqs: 64\n"
                                "fit: {command: pagesim calibrate, runs: [a, b]}\n");
  const ExperimentConfig c = parse_experiment(
      YAML::Load("calibration: " + cal + "\nscheduler: {max_num_seqs: 32}\nkv: {slots: 0}\n"), "exp.yaml");
  EXPECT_DOUBLE_EQ(c.kv.gpu_memory_utilization, 0.8);
  EXPECT_EQ(c.scheduler.max_num_seqs, 32);  // the experiment's own value wins
  EXPECT_EQ(c.calibration, cal);
  EXPECT_EQ(to_yaml(c)["calibration"].as<std::string>(), cal);
}

TEST_F(CalibrationTest, ASetOverrideWinsAndNoneTurnsItOff) {
  const std::string cal = write("cal.yaml", "values: {scheduler.max_num_seqs: 64}\n");
  YAML::Node root = YAML::Load("calibration: " + cal + "\n");
  apply_override(root, "scheduler.max_num_seqs=16");
  EXPECT_EQ(parse_experiment(root, "exp.yaml").scheduler.max_num_seqs, 16);
  EXPECT_EQ(parse_experiment(YAML::Load("calibration: " + cal + "\nscheduler: {kind: vllm}\n"), "exp.yaml")
                .scheduler.max_num_seqs,
            64);
  YAML::Node off = YAML::Load("calibration: " + cal + "\nscheduler: {kind: vllm}\n");
  apply_override(off, "calibration=none");
  EXPECT_EQ(parse_experiment(off, "exp.yaml").scheduler.max_num_seqs, ExperimentConfig{}.scheduler.max_num_seqs);
}

TEST_F(CalibrationTest, OnlySectionsTheExperimentHasAreFilled) {
  // No `client` section: the calibration's client time turns no client metrics on.
  const std::string cal = write("cal.yaml", "values: {client.latency_s: 0.01, scheduler.max_num_seqs: 8}\n");
  const ExperimentConfig c = parse_experiment(YAML::Load("calibration: " + cal + "\nscheduler: {kind: vllm}"),
                                              "exp.yaml");
  EXPECT_FALSE(c.client.enabled);
  EXPECT_EQ(c.scheduler.max_num_seqs, 8);
  const ExperimentConfig d = parse_experiment(
      YAML::Load("calibration: " + cal + "\nclient: {kind: inference_perf}"), "exp.yaml");
  EXPECT_TRUE(d.client.enabled);
  EXPECT_DOUBLE_EQ(d.client.latency_s, 0.01);
  EXPECT_EQ(d.scheduler.max_num_seqs, ExperimentConfig{}.scheduler.max_num_seqs);  // no scheduler section
}

TEST_F(CalibrationTest, TheFileIsNotModifiedAndWithoutTheKeyNothingChanges) {
  const YAML::Node root = YAML::Load("name: x\n");
  EXPECT_FALSE(to_yaml(parse_experiment(root, "exp.yaml"))["calibration"]);
}

TEST_F(CalibrationTest, BadFilesAreNamedErrors) {
  auto error_of = [&](const std::string& yaml) -> std::string {
    try {
      parse_experiment(YAML::Load(yaml), "exp.yaml");
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "no error";
  };
  const std::string missing = (dir_ / "missing.yaml").string();
  EXPECT_NE(error_of("calibration: " + missing).find("exp.yaml:1: calibration: expected an existing file, found '" +
                                                    missing + "': no such path"),
            std::string::npos);
  const std::string no_values = write("novalues.yaml", "fit: {}\n");
  EXPECT_NE(error_of("calibration: " + no_values).find("has no `values` map"), std::string::npos);
  const std::string nested = write("nested.yaml", "values:\n  cost: {kind: constant}\n");
  EXPECT_NE(error_of("calibration: " + nested).find("values.cost: expected a single value"), std::string::npos);
  const std::string unknown = write("unknown.yaml", "values: {scheduler.no_such_key: 1}\n");
  EXPECT_NE(error_of("calibration: " + unknown + "\nscheduler: {kind: vllm}")
                .find(unknown + ": values.scheduler.no_such_key: "),
            std::string::npos)
      << error_of("calibration: " + unknown + "\nscheduler: {kind: vllm}");
  // A value the experiment's kind does not read names the calibration file and the way out.
  const std::string host = write("host.yaml", "values: {cost.host.step_s: 0.001}\n");
  const std::string e = error_of("calibration: " + host + "\ncost: {kind: roofline}");
  EXPECT_NE(e.find(host + ": values.cost.host.step_s: "), std::string::npos) << e;
  EXPECT_NE(e.find("calibration: none"), std::string::npos) << e;
  EXPECT_NE(error_of("calibration: [a]").find("calibration: expected the path of a calibration file"),
            std::string::npos);
  // A device would never end: refused before reading; so is a folder.
  EXPECT_NE(error_of("calibration: /dev/zero").find("'/dev/zero' is not a regular file"), std::string::npos);
  EXPECT_NE(error_of("calibration: " + dir_.string()).find("calibration: expected an existing file"), std::string::npos);
  const std::string big = write("big.yaml", "values: {}\n# " + std::string(kMaxCalibrationBytes, 'x') + "\n");
  EXPECT_NE(error_of("calibration: " + big).find("expected at most 1048576"), std::string::npos);
}

}  // namespace
}  // namespace pagesim::sim

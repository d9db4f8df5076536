// cost.kind operators through a whole run: summary.json's "cost" object (lookups and
// extrapolated lookups per operator), its absence under other kinds, and the GPU errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/config/config_error.h"
#include "sim/experiment/experiment.h"
#include "temp_dir_test.h"

namespace pagesim::sim {
namespace {

namespace fs = std::filesystem;

class OperatorsCostExperimentTest : public testing::TempDirTest {};

std::string experiment(const std::string& cost, const std::string& gpu = "h100-sxm") {
  return "name: ops\n"
         "seed: 3\n"
         "workload:\n"
         "  kind: synthetic\n"
         "  arrival: {kind: poisson, rate: 8}\n"
         "  lengths:\n"
         "    kind: distributions\n"
         "    prompt: {kind: uniform, lo: 100, hi: 900}\n"
         "    output: {kind: uniform, lo: 20, hi: 200}\n"
         "  max_requests: 60\n"
         "model: llama-2-7b\n"
         "gpu: " + gpu + "\n"
         "scheduler: {kind: vllm-v1, max_num_batched_tokens: 2048}\n"
         "cost: " + cost + "\n";
}

nlohmann::json summary(const fs::path& out) {
  return nlohmann::json::parse(testing::read_file(out / "summary.json"));
}

// A cluster's replicas of one configuration share one cost model (Run::cost), whose counters
// then hold every replica's lookups: summary.json counts them once, as it sums the models of
// replicas that each have their own (an override that repeats the file's settings).
TEST_F(OperatorsCostExperimentTest, ReplicasSharingACostModelCountEachLookupOnce) {
  const std::string cluster = experiment("{kind: operators, host: {step_s: 0.001}}") + "replicas: {count: 3";
  const std::string shared = write("shared.yaml", cluster + "}\n");
  const std::string own = write("own.yaml", cluster + ", overrides: [{index: 1, model: llama-2-7b}, {index: 2, model: llama-2-7b}]}\n");
  run_experiment_file(shared, {}, dir_ / "shared");
  run_experiment_file(own, {}, dir_ / "own");
  const nlohmann::json a = summary(dir_ / "shared"), b = summary(dir_ / "own");
  ASSERT_TRUE(a.contains("cost")) << a.dump(1);
  EXPECT_GT(a["cost"]["lookups"]["gemm"].get<std::int64_t>(), 0);
  EXPECT_EQ(a["cost"], b["cost"]);
  EXPECT_EQ(a["requests_finished"], b["requests_finished"]);
}

TEST_F(OperatorsCostExperimentTest, SummaryCountsLookupsPerOperator) {
  const std::string file = write("ops.yaml", experiment("{kind: operators, host: {step_s: 0.001}}"));
  run_experiment_file(file, {}, dir_ / "out");
  const nlohmann::json s = summary(dir_ / "out");
  ASSERT_TRUE(s.contains("cost")) << s.dump(1);
  const nlohmann::json& cost = s["cost"];
  for (const char* op : {"gemm", "context_attention", "generation_attention", "moe", "allreduce"}) {
    EXPECT_TRUE(cost["lookups"].contains(op)) << op;
    EXPECT_TRUE(cost["extrapolated_lookups"].contains(op)) << op;
  }
  EXPECT_GT(cost["lookups"]["gemm"].get<std::int64_t>(), 0);
  EXPECT_GT(cost["lookups"]["context_attention"].get<std::int64_t>(), 0);
  // llama-2-7b's 32 kv heads are beyond the decode table's 8: every decode lookup extrapolates.
  EXPECT_EQ(cost["extrapolated_lookups"]["generation_attention"], cost["lookups"]["generation_attention"]);
  EXPECT_EQ(cost["lookups"]["moe"], 0);
  EXPECT_NE(s["cost_model"].get<std::string>().find("operators(model=llama-2-7b"), std::string::npos);
  // The decode step is a few milliseconds: 1 ms of host time plus the measured operators.
  EXPECT_GT(s["tpot_s"]["p50"].get<double>(), 5e-3);
  EXPECT_LT(s["tpot_s"]["p50"].get<double>(), 15e-3);
  // config.resolved.yaml holds the operators keys and runs again to the same summary.
  const std::string resolved = testing::read_file(dir_ / "out/config.resolved.yaml");
  EXPECT_NE(resolved.find("operators:"), std::string::npos);
  EXPECT_NE(resolved.find("step_s:"), std::string::npos);
  run_experiment_file((dir_ / "out/config.resolved.yaml").string(), {}, dir_ / "again");
  EXPECT_EQ(summary(dir_ / "again")["cost"], cost);
}

TEST_F(OperatorsCostExperimentTest, OtherKindsWriteNoCostObjectNorOperatorsKeys) {
  const std::string file = write("roof.yaml", experiment("{kind: roofline}"));
  run_experiment_file(file, {}, dir_ / "out");
  EXPECT_FALSE(summary(dir_ / "out").contains("cost"));
  const std::string resolved = testing::read_file(dir_ / "out/config.resolved.yaml");
  EXPECT_EQ(resolved.find("operators:"), std::string::npos);
  EXPECT_EQ(resolved.find("host:"), std::string::npos);
}

TEST_F(OperatorsCostExperimentTest, AGpuWithoutTablesIsNamedWithTheMeasuredOnes) {
  const std::string file = write("a100.yaml", experiment("{kind: operators}", "a100-40gb"));
  try {
    run_experiment_file(file, {}, dir_ / "out");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "gpu");
    EXPECT_NE(std::string(e.what()).find("a100_sxm, h100_sxm, h200_sxm, l40s"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cost.operators.gpu"), std::string::npos) << e.what();
  }
  // Naming the folder runs it (the 80 GB A100's tables for a 40 GB preset, the user's call).
  const std::string named = write("named.yaml", experiment("{kind: operators, operators: {gpu: a100_sxm}}", "a100-40gb"));
  EXPECT_NO_THROW(run_experiment_file(named, {}, dir_ / "named"));
  const std::string unknown = write("unknown.yaml", experiment("{kind: operators, operators: {gpu: tpu}}"));
  try {
    run_experiment_file(unknown, {}, dir_ / "unknown");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "cost");
    EXPECT_NE(std::string(e.what()).find("gpu 'tpu'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pagesim::sim

// The inference_perf workload and the client section end to end: a two-stage Llama-2-7B run
// on an H100 under vllm-v1 with its prefix cache writes client_metrics.json with both stages
// and sane values, a run without `client` writes none and keeps its resolved config free of
// the new sections, a stage still in flight when the next starts is warned about, and bad
// settings are config errors naming the key and its line.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "sim/config/config_error.h"
#include "sim/config/experiment_config.h"
#include "sim/experiment/experiment.h"
#include "temp_dir_test.h"

namespace pagesim::sim {
namespace {

namespace fs = std::filesystem;
using testing::read_file;

class InferencePerfExperimentTest : public testing::TempDirTest {};

std::string experiment(const std::string& stages, double gap, bool client) {
  return "name: ip\n"
         "seed: 3\n"
         "workload:\n"
         "  kind: inference_perf\n"
         "  inference_perf:\n"
         "    shared_prefix: {num_groups: 2, num_prompts_per_group: 3, system_prompt_len: 64, question_len: 100, "
         "output_len: 20}\n"
         "    load_type: constant\n"
         "    stages: " + stages + "\n"
         "    stage_gap_s: " + std::to_string(gap) + "\n"
         "model: llama-2-7b\n"
         "gpu: h100-sxm\n"
         "allocator: {kind: paged, block_size: 16}\n"
         "scheduler: {kind: vllm-v1, max_num_batched_tokens: 2048, max_num_seqs: 128}\n"
         "cost: {kind: roofline}\n" +
         (client ? "client: {kind: inference_perf, stream_events_per_token: 2, stream_final_events: 2}\n" : "");
}

TEST_F(InferencePerfExperimentTest, TwoStagesWriteClientMetrics) {
  const std::string file = write("ip.yaml", experiment("[{rate: 2, duration_s: 10}, {rate: 4, duration_s: 5}]", 3, true));
  const fs::path out = dir_ / "out";
  run_experiment_file(file, {}, out);
  ASSERT_TRUE(fs::exists(out / "client_metrics.json"));
  const auto j = nlohmann::json::parse(read_file(out / "client_metrics.json"));
  ASSERT_EQ(j["stages"].size(), 2u);
  for (int k = 0; k < 2; ++k) {
    const auto& s = j["stages"][k];
    EXPECT_EQ(s["stage"], k);
    EXPECT_EQ(s["requests_ok"], 20);
    EXPECT_EQ(s["prompt_len"]["mean"], 164.0);
    EXPECT_EQ(s["output_len"]["max"], 20.0);
    const auto& l = s["latency_s"];
    const double e2e = l["request_latency"]["mean"], ttft = l["time_to_first_token"]["mean"],
                 tpot = l["time_per_output_token"]["mean"];
    EXPECT_GT(ttft, 0);
    EXPECT_LT(ttft, e2e);
    EXPECT_GT(tpot, 0);
    // Every request sends 2 * 20 + 2 messages: E2E - TTFT = TPOT * (2N + 1), on average too.
    EXPECT_NEAR((e2e - ttft) / tpot, 41.0, 1e-9);
    EXPECT_EQ(l["inter_token_latency"]["median"], 0.0);  // 21 zero gaps of 41 per request
    EXPECT_GT(l["inter_token_latency"]["p90"].get<double>(), 0.0);
    EXPECT_NEAR(l["normalized_time_per_output_token"]["mean"].get<double>(), e2e / 20, 1e-12);
  }
  EXPECT_EQ(j["stages"][0]["rate_per_s"], 2.0);
  EXPECT_EQ(j["stages"][1]["duration_s"], 5.0);
  EXPECT_EQ(j["all_stages"]["requests_ok"], 40);
  const auto summary = nlohmann::json::parse(read_file(out / "summary.json"));
  EXPECT_GT(summary["prefix_hit_rate"].get<double>(), 0.3);  // 64-token system prompts, each prompt resent
  EXPECT_FALSE(summary.contains("warnings"));
  const std::string resolved = read_file(out / "config.resolved.yaml");
  EXPECT_NE(resolved.find("client:"), std::string::npos);
  EXPECT_NE(resolved.find("inference_perf:"), std::string::npos);
  // The resolved config runs again to the same client metrics.
  const fs::path again = dir_ / "again";
  run_experiment_file((out / "config.resolved.yaml").string(), {}, again);
  EXPECT_EQ(read_file(again / "client_metrics.json"), read_file(out / "client_metrics.json"));
}

TEST_F(InferencePerfExperimentTest, WithoutClientNoClientMetrics) {
  const std::string file = write("ip.yaml", experiment("[{rate: 2, duration_s: 5}]", 3, false));
  const fs::path out = dir_ / "out";
  run_experiment_file(file, {}, out);
  EXPECT_FALSE(fs::exists(out / "client_metrics.json"));
  EXPECT_TRUE(fs::exists(out / "summary.json"));
  EXPECT_EQ(read_file(out / "config.resolved.yaml").find("client"), std::string::npos);
}

TEST_F(InferencePerfExperimentTest, AStageStillInFlightIsWarnedAbout) {
  // Stage 1 sends 100 requests within a second, its first a few ms after stage 0's last.
  const std::string file = write("ip.yaml", experiment("[{rate: 2, duration_s: 5}, {rate: 100, duration_s: 1}]", 0, true));
  const fs::path out = dir_ / "out";
  run_experiment_file(file, {}, out);
  const auto summary = nlohmann::json::parse(read_file(out / "summary.json"));
  ASSERT_TRUE(summary.contains("warnings"));
  const std::string w = summary["warnings"][0];
  EXPECT_NE(w.find("workload.inference_perf.stage_gap_s"), std::string::npos) << w;
  EXPECT_NE(w.find("load stage 0 still had 1 requests in flight"), std::string::npos) << w;
}

TEST_F(InferencePerfExperimentTest, BadSettingsAreConfigErrorsWithTheirLine) {
  auto error_of = [&](const std::string& yaml) -> std::string {
    try {
      const std::string file = write("bad.yaml", yaml);
      const ExperimentConfig c = parse_experiment(load_yaml_file(file), "bad.yaml");
      make_workload_source(c);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "no error";
  };
  const std::string base = experiment("[{rate: 2, duration_s: 5}, {rate: 0, duration_s: 5}]", 1, true);
  EXPECT_NE(error_of(base).find("bad.yaml:8: workload.inference_perf.stages[1].rate: expected a finite rate > 0"),
            std::string::npos)
      << error_of(base);
  std::string y = experiment("[]", 1, true);
  EXPECT_NE(error_of(y).find("workload.inference_perf.stages: expected a list of at least one stage"),
            std::string::npos)
      << error_of(y);
  y = experiment("[{rate: 2, duration_s: -1}]", 1, true);
  EXPECT_NE(error_of(y).find("bad.yaml:8: workload.inference_perf.stages[0].duration_s"), std::string::npos)
      << error_of(y);
  y = experiment("[{rate: 2, duration_s: 5, burst: 1}]", 1, true);
  EXPECT_NE(error_of(y).find("bad.yaml:8: workload.inference_perf.stages[0].burst: unknown key"), std::string::npos)
      << error_of(y);
  y = experiment("[{rate: 2, duration_s: 5}]", 1, true);
  std::string z = y;
  z.replace(z.find("num_groups: 2"), 13, "num_groups: 0");
  EXPECT_NE(error_of(z).find("bad.yaml:6: workload.inference_perf.shared_prefix.num_groups: expected a count >= 1"),
            std::string::npos)
      << error_of(z);
  z = y;
  z.replace(z.find("stream_events_per_token: 2"), 26, "stream_events_per_token: 0");
  EXPECT_NE(error_of(z).find("bad.yaml:15: client.stream_events_per_token: expected a count"), std::string::npos)
      << error_of(z);
  z = y;
  z.replace(z.find("kind: inference_perf\n  inference_perf"), 20, "kind: synthetic");
  EXPECT_NE(error_of(z).find("workload.inference_perf: these settings describe an inference_perf workload"),
            std::string::npos)
      << error_of(z);
  z = y + "workload_extra: 1\n";
  EXPECT_NE(error_of(z).find("workload_extra: unknown key"), std::string::npos) << error_of(z);
}

}  // namespace
}  // namespace pagesim::sim

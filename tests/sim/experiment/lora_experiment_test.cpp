// LoRA adapters through run_experiment_file(): vLLM's max_loras constraint (a request whose
// adapter has no slot is skipped and the next one admitted), S-LoRA's unified pages (no slot
// limit), loads priced on the critical path, the adapter_weights class in the outputs, and
// bad lora settings refused naming their key.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/config/config_error.h"
#include "sim/experiment/experiment.h"
#include "temp_dir_test.h"

namespace pagesim::sim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::read_file;

class LoraExperimentTest : public testing::TempDirTest {
 protected:
  // Four requests at t = 0 naming adapters 0, 1, 0, 1 (native CSV's adapter column).
  std::string experiment(const std::string& lora) {
    const fs::path trace = write("trace.csv",
                                 "arrival_s,prompt_tokens,output_tokens,adapter\n"
                                 "0,100,20,0\n0,100,20,1\n0,100,20,0\n0,100,20,1\n");
    return "name: lora\nseed: 1\nmodel: llama-2-7b\ngpu: a100-40gb\n"
           "workload: {kind: trace, trace: {path: '" + trace.string() + "', format: native}}\n"
           "kv: {slots: 16384}\nscheduler: {kind: vllm}\n" + lora;
  }
  // requests.csv's rows by request id: first_scheduled_s and finish_s.
  std::map<int, std::pair<double, double>> times(const fs::path& out) {
    std::istringstream in(read_file(out / "requests.csv"));
    std::string line;
    std::getline(in, line);
    std::vector<std::string> header;
    for (std::stringstream h(line); std::getline(h, line, ',');) header.push_back(line);
    std::map<int, std::pair<double, double>> t;
    while (std::getline(in, line)) {
      std::vector<std::string> f;
      for (std::stringstream r(line); std::getline(r, line, ',');) f.push_back(line);
      std::map<std::string, std::string> row;
      for (std::size_t i = 0; i < header.size(); ++i) row[header[i]] = f[i];
      t[std::stoi(row["id"])] = {std::stod(row["first_scheduled_s"]), std::stod(row["finish_s"])};
    }
    return t;
  }
  std::string refusal(const std::string& yaml) {
    try {
      run_experiment_file(write("bad.yaml", yaml), {}, dir_ / "bad");
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "(accepted)";
  }
};

TEST_F(LoraExperimentTest, VllmSlotsSkipARequestWhoseAdapterHasNoSlot) {
  const fs::path out = dir_ / "vllm";
  run_experiment_file(write("vllm.yaml", experiment("lora: {placement: vllm, max_loras: 1}\n")), {}, out);
  auto t = times(out);
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].first, t[2].first) << "request 2 (adapter 0) is admitted past request 1 (adapter 1)";
  EXPECT_GE(t[1].first, std::max(t[0].second, t[2].second)) << "adapter 1 waits for adapter 0's slot";
  const json s = json::parse(read_file(out / "summary.json"));
  EXPECT_EQ(s.at("lora").at("loads"), 2);
  EXPECT_EQ(s.at("lora").at("evictions"), 1);
  EXPECT_EQ(s.at("lora").at("adapters"), 2);  // the distinct adapters the trace names (it read 0)
  EXPECT_GT(s.at("lora").at("load_seconds").get<double>(), 0);
  // The slot (sized for every LoRA-capable layer at the rank) is adapter_weights, always.
  EXPECT_GT(s.at("adapter_weights").at("memory_pct").get<double>(), 0);
  // One slot of rank 16 over q, k, v, o, gate, up, down of llama-2-7b, in 512 KiB blocks.
  const double slot = 16.0 * (4 * 8192 + 3 * (4096 + 11008)) * 32 * 2;
  EXPECT_EQ(s.at("lora").at("slot_bytes").get<double>(), slot);
}

TEST_F(LoraExperimentTest, UnifiedPagesHoldBothAdaptersAtOnceAndPayTheLoadFirst) {
  const fs::path out = dir_ / "unified";
  run_experiment_file(write("u.yaml", experiment("lora: {placement: unified, max_loras: 1}\n")), {}, out);
  auto t = times(out);
  for (int i = 1; i < 4; ++i) EXPECT_EQ(t[i].first, t[0].first);
  const json s = json::parse(read_file(out / "summary.json"));
  EXPECT_EQ(s.at("lora").at("loads"), 2);
  // Two llama-2-7b adapters of rank 16 over q, k, v, o: 2 × 16 × 8192 × 4 × 32 × 2 bytes.
  EXPECT_EQ(s.at("lora").at("load_bytes").get<double>(), 2.0 * 16 * 8192 * 4 * 32 * 2);
  // The first iteration waits for both loads: its end (the first token) is past them.
  const double load_s = s.at("lora").at("load_seconds").get<double>();
  EXPECT_GE(s.at("ttft_s").at("max").get<double>(), load_s);
  const std::string header = read_file(out / "iterations.csv").substr(0, read_file(out / "iterations.csv").find('\n'));
  EXPECT_TRUE(header.ends_with(",adapter_weights")) << header;
}

// A trace naming adapters, run without a lora section, serves them as the base model and says so.
TEST_F(LoraExperimentTest, TraceAdaptersWithoutALoraSectionAreAWarning) {
  const fs::path out = dir_ / "base";
  run_experiment_file(write("base.yaml", experiment("")), {}, out);
  const json s = json::parse(read_file(out / "summary.json"));
  ASSERT_TRUE(s.contains("warnings"));
  bool named = false;
  for (const auto& w : s.at("warnings")) named = named || w.get<std::string>().find("names 2 distinct LoRA adapters") != std::string::npos;
  EXPECT_TRUE(named) << s.at("warnings");
  EXPECT_FALSE(s.contains("lora"));
}

TEST_F(LoraExperimentTest, BadSettingsAreRefusedNamingTheKey) {
  const std::string base = experiment("");
  EXPECT_NE(refusal(base + "lora: {max_loras: 0}\n").find("lora.max_loras"), std::string::npos);
  EXPECT_NE(refusal(base + "lora: {max_loras: 4, max_cpu_loras: 2}\n").find("lora.max_cpu_loras"), std::string::npos);
  EXPECT_NE(refusal(base + "lora: {rank: 0}\n").find("lora.rank"), std::string::npos);
  EXPECT_NE(refusal(base + "lora: {target_modules: 'q_proj,fc9'}\n").find("lora.target_modules"), std::string::npos);
  EXPECT_NE(refusal(base + "lora: {popularity: zipf, zipf_alpha: 0}\n").find("lora.zipf_alpha"), std::string::npos);
  EXPECT_NE(refusal(base + "lora: {bogus: 1}\n").find("lora.bogus"), std::string::npos);
  // Zipf's table grows with the adapters, not the requests (1e8 took a gigabyte): bounded.
  EXPECT_NE(refusal(base + "lora: {adapters: 100000000, popularity: zipf}\n").find("expected at most 2^20"),
            std::string::npos);
  // An adapter larger than the whole pool, and vLLM slots that leave no KV.
  auto with = [&](const std::string& from, const std::string& to) {
    std::string y = base;
    y.replace(y.find(from), from.size(), to);
    return y;
  };
  const std::string tiny = refusal(with("slots: 16384", "slots: 64") + "lora: {placement: unified, rank: 64}\n");
  EXPECT_NE(tiny.find("lora.rank"), std::string::npos) << tiny;
  EXPECT_NE(refusal(base + "lora: {placement: vllm, max_loras: 64, rank: 64}\n").find("lora.max_loras"),
            std::string::npos);
  EXPECT_NE(refusal(base + "allocator: {kind: contiguous}\nlora: {}\n").find("allocator.kind"), std::string::npos);
  // A request that fits the pool but not what vLLM's LoRA slots leave of it names the slots
  // (it blamed kv.slots, "never fits the KV pool of 16384 slots"): 102 slots of 10 blocks each.
  const std::string region = refusal(base + "lora: {placement: vllm, max_loras: 102}\n");
  EXPECT_NE(region.find("lora.max_loras: request 0"), std::string::npos) << region;
  EXPECT_NE(region.find("of which 16320 hold LoRA's adapter slots"), std::string::npos) << region;
  const std::string orca = refusal(with("kind: vllm}", "kind: orca}") + "lora: {}\n");
  EXPECT_NE(orca.find("scheduler.kind"), std::string::npos) << orca;
}

TEST_F(LoraExperimentTest, ZipfAssignmentIsSeededAndSkewed) {
  const std::string yaml = "name: z\nseed: 3\nmodel: llama-2-7b\ngpu: a100-40gb\n"
                           "workload: {kind: synthetic, arrival: {kind: poisson, rate: 50}, max_requests: 400,\n"
                           "  lengths: {prompt: {kind: fixed, value: 64}, output: {kind: fixed, value: 4}}}\n"
                           "scheduler: {kind: vllm}\nlora: {placement: unified, adapters: 20, popularity: zipf}\n";
  const fs::path a = dir_ / "a", b = dir_ / "b";
  run_experiment_file(write("z.yaml", yaml), {}, a);
  run_experiment_file(write("z.yaml", yaml), {}, b);
  EXPECT_EQ(read_file(a / "requests.csv"), read_file(b / "requests.csv"));
  const json s = json::parse(read_file(a / "summary.json"));
  EXPECT_GT(s.at("lora").at("loads").get<std::int64_t>(), 0);
  EXPECT_LE(s.at("lora").at("loads").get<std::int64_t>(), 400);
}

}  // namespace
}  // namespace pagesim::sim

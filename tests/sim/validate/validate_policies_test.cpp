// Closing the loop in CI: a short simulation of every allocator policy samples batches,
// and the paged-attention reference (the CPU path of `pagesim validate`) must reproduce
// dense attention on every one of them. A block table corrupted in a real sampled file
// must fail.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/experiment/experiment.h"
#include "sim/validate/cpu_paged_attention.h"
#include "sim/validate/sampled_batch.h"
#include "sim/validate/validate_command.h"

namespace pagesim::sim {
namespace {

namespace fs = std::filesystem;

struct Case {
  const char* name;
  std::vector<std::string> overrides;
};

// Requests whose prompts start with one of three shared documents (hash ids per 16 tokens).
void write_prefix_trace(const fs::path& path) {
  std::ofstream out(path);
  out << "arrival_s,prompt_tokens,output_tokens,hash_ids\n";
  for (int i = 0; i < 80; ++i) {
    const int prompt = 40 + (i * 37) % 150, doc = i % 3;
    std::string ids;
    for (int b = 0; b * 16 < prompt; ++b) ids += (b ? " " : "") + std::to_string(b < 3 ? doc * 100 + b : 1000 + i * 20 + b);
    out << i * 0.15 << "," << prompt << "," << 5 + (i * 13) % 60 << "," << ids << "\n";
  }
}

class ValidatePolicies : public ::testing::TestWithParam<Case> {
 protected:
  fs::path dir_ = fs::temp_directory_path() / ("pagesim-validate-" + std::to_string(getpid()) + "-" + GetParam().name);
  void TearDown() override { fs::remove_all(dir_); }

  fs::path simulate() {
    fs::create_directories(dir_);
    write_prefix_trace(dir_ / "prefix.csv");
    std::ofstream(dir_ / "exp.yaml") << "name: validate-policies\n"
                                        "seed: 3\n"
                                        "workload:\n"
                                        "  kind: synthetic\n"
                                        "  arrival: {kind: poisson, rate: 6.0}\n"
                                        "  lengths: {kind: cycle_shuffle, path: " PAGESIM_SOURCE_DIR
                                        "/traces/data/sharegpt_opt_lengths.csv}\n"
                                        "  max_total_tokens: 1024\n"
                                        "  max_requests: 120\n"
                                        "kv: {slots: 4096}\n"
                                        "output: {iterations_stride: 0, requests_csv: false}\n"
                                        "validate: {every_n_iterations: 40, max_batches: 5}\n";
    std::vector<std::string> sets = GetParam().overrides;
    for (auto& s : sets)
      if (auto p = s.find("PREFIX_TRACE"); p != std::string::npos) s.replace(p, 12, (dir_ / "prefix.csv").string());
    run_experiment_file((dir_ / "exp.yaml").string(), sets, dir_ / "out");
    return dir_ / "out" / "batches.jsonl";
  }

  static int validate(const fs::path& batches, std::string* report) {
    ValidateOptions o;
    o.file = batches;
    std::ostringstream out, err;
    const CpuPagedAttention cpu;
    const int rc = run_validate_command(o, PagedAttentionBackends{.cpu = &cpu, .cuda = nullptr}, out, err);
    *report = out.str() + err.str();
    return rc;
  }
};

TEST_P(ValidatePolicies, ReferenceMatchesDenseAttentionOnEverySampledBatch) {
  const fs::path batches = simulate();
  ASSERT_EQ(read_batch_file(batches).batches.size(), 5u);
  std::string report;
  EXPECT_EQ(validate(batches, &report), 0) << report;
  EXPECT_NE(report.find("5 of 5 batches pass"), std::string::npos) << report;
  // The prefix-cache cases must really reuse blocks, and name them by hash in the batches.
  const auto& sets = GetParam().overrides;
  if (std::find(sets.begin(), sets.end(), "allocator.prefix_cache=true") != sets.end()) {
    std::ifstream summary(dir_ / "out" / "summary.json");
    EXPECT_GT(nlohmann::json::parse(summary)["prefix_hit_rate"].get<double>(), 0.1);
    std::stringstream text;
    text << std::ifstream(batches).rdbuf();
    EXPECT_NE(text.str().find("\"origin\":\"h"), std::string::npos);
  }
}

// Point one sequence's last block at the first block of another sequence of the batch.
TEST_P(ValidatePolicies, ACorruptedBlockTableFails) {
  const fs::path batches = simulate();
  std::ifstream in(batches);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  const auto block_size = nlohmann::json::parse(lines.at(0))["block_size"].get<std::int64_t>();
  bool planted = false;
  for (std::size_t i = 1; i < lines.size() && !planted; ++i) {
    auto j = nlohmann::ordered_json::parse(lines[i]);
    auto& seqs = j["sequences"];
    for (std::size_t a = 0; a < seqs.size() && !planted; ++a) {
      auto& ta = seqs[a]["block_table"];
      const auto kv_len = seqs[a]["kv_len"].get<std::int64_t>();
      const auto last = (kv_len - 1) / block_size;  // the block holding the newest token
      for (std::size_t b = 0; b < seqs.size() && !planted; ++b) {
        const auto& tb = seqs[b]["block_table"];
        if (a == b || tb.empty() || last < 1 || tb[0] == ta[last]) continue;
        ta[last] = tb[0];
        planted = true;
      }
    }
    lines[i] = j.dump();
  }
  ASSERT_TRUE(planted) << "no batch with two sequences to corrupt";
  {
    std::ofstream out(batches);
    for (const auto& l : lines) out << l << "\n";
  }
  std::string report;
  EXPECT_EQ(validate(batches, &report), 1) << report;
  EXPECT_NE(report.find("fail"), std::string::npos) << report;
}

INSTANTIATE_TEST_SUITE_P(
    EveryAllocator, ValidatePolicies,
    ::testing::Values(
        Case{"paged", {"allocator.kind=paged", "scheduler.kind=vllm"}},
        Case{"paged_parallel_sampling",
             {"allocator.block_size=8", "workload.sampling=[{n: 3}]", "scheduler.kind=vllm"}},
        Case{"paged_beam_search", {"allocator.block_size=4", "workload.sampling=[{beam_width: 4}]"}},
        Case{"paged_prefix_cache",
             {"allocator.prefix_cache=true", "workload.kind=trace", "workload.trace.path=PREFIX_TRACE",
              "workload.trace.format=native", "workload.trace.hash_block_tokens=16", "workload.max_total_tokens=0",
              "workload.max_requests=0"}},
        Case{"paged_prefix_sarathi",
             {"allocator.prefix_cache=true", "scheduler.kind=sarathi", "scheduler.chunk_tokens=128",
              "workload.kind=trace", "workload.trace.path=PREFIX_TRACE", "workload.trace.format=native",
              "workload.trace.hash_block_tokens=16", "workload.max_total_tokens=0", "workload.max_requests=0"}},
        Case{"contiguous_buddy",
             {"allocator.kind=contiguous", "allocator.placement=buddy", "allocator.reservation=pow2",
              "scheduler.kind=orca"}},
        Case{"contiguous_first_fit_parallel",
             {"allocator.kind=contiguous", "allocator.placement=first_fit", "allocator.reservation=oracle",
              "workload.sampling=[{n: 2}]", "scheduler.kind=orca"}},
        Case{"contiguous_best_fit",
             {"allocator.kind=contiguous", "allocator.placement=best_fit", "allocator.reservation=max",
              "allocator.max_seq_len=1024", "scheduler.kind=orca"}}),
    [](const ::testing::TestParamInfo<Case>& param_info) { return std::string(param_info.param.name); });

}  // namespace
}  // namespace pagesim::sim

// Offload tiers through run_experiment_file(): a YAML with allocator.offload runs on the
// bundled Mooncake conversation trace, writes the "tiers" object and the tier columns
// (consistent with each other and with the prefix cache's counts), resolves its config
// with the section, and a sweep over overlap flattens the tier keys into sweep.csv.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/experiment/experiment.h"
#include "sim_harness.h"
#include "temp_dir_test.h"

namespace pagesim::sim {
namespace {

namespace fs = std::filesystem;
using testing::parse_csv;
using testing::read_file;
using testing::Row;

const fs::path kSource = PAGESIM_SOURCE_DIR;
const std::string kMooncake = (kSource / "traces/data/mooncake_conversation_trace.jsonl").string();

class OffloadTiersTest : public testing::TempDirTest {};

// 600 conversation requests into a 32k-slot pool (2048 blocks of 16): the GPU prefix cache
// evicts, and tiers of 8192 and 65536 blocks (Llama-2-7B: 8 MiB per block) keep what it
// evicts: the next turns of conversations find their earlier turns there (mostly on disk).
std::string tiers_experiment(const std::string& extra = "") {
  return "name: tiers\n"
         "seed: 1\n"
         "workload:\n"
         "  kind: trace\n"
         "  trace: {path: '" + kMooncake + "', format: mooncake}\n"
         "  max_requests: 600\n"
         "  max_total_tokens: 16384\n"
         "model: llama-2-7b\n"
         "gpu: a100-80gb\n"
         "max_model_len: off\n"
         "kv: {slots: 32768}\n"
         "allocator:\n"
         "  kind: paged\n"
         "  block_size: 16\n"
         "  prefix_cache: true\n"
         "  cpu_swap_gib: 64\n"
         "  offload:\n"
         "    tiers:\n"
         "      - {kind: cpu, capacity_gib: 64, read_gbps: 25, write_gbps: 25, latency_us: 10}\n"
         "      - {kind: disk, capacity_gib: 512, read_gbps: 5, write_gbps: 2, latency_us: 100}\n"
         "scheduler: {kind: vllm, max_num_batched_tokens: 16384}\n"
         "cost: {kind: roofline}\n" + extra;
}

double column_sum(const std::vector<Row>& rows, const char* column) {
  double s = 0;
  for (const Row& r : rows) s += std::stod(r.at(column));
  return s;
}

TEST_F(OffloadTiersTest, RunWritesTierRecordsThatAddUp) {
  const fs::path out = dir_ / "run";
  const auto res = run_experiment_file(write("tiers.yaml", tiers_experiment()), {}, out);
  ASSERT_EQ(res.size(), 1u);
  const Summary& s = res[0].summary;
  ASSERT_TRUE(s.prefix_cache.has_value());
  ASSERT_TRUE(s.tiers.has_value());
  const TierSummary& t = *s.tiers;
  EXPECT_GT(t.cpu.loaded_blocks, 0);
  EXPECT_GT(t.disk.hit_tokens, 0);
  EXPECT_GT(t.disk.stored_blocks, 0);
  EXPECT_EQ(t.gpu_hit_tokens + t.cpu.hit_tokens + t.disk.hit_tokens, s.prefix_cache->hit_tokens);
  EXPECT_NEAR(t.gpu_hit_rate + t.cpu.hit_rate + t.disk.hit_rate, s.prefix_hit_rate, 1e-12);
  const double block_bytes = 16.0 * 512 * 1024;  // Llama-2-7B: 512 KiB of KV per token
  EXPECT_DOUBLE_EQ(t.cpu.write_bytes, static_cast<double>(t.cpu.stored_blocks) * block_bytes);
  EXPECT_DOUBLE_EQ(t.disk.read_bytes, static_cast<double>(t.disk.loaded_blocks) * block_bytes);
  EXPECT_GT(t.transfer_s, 0);
  EXPECT_DOUBLE_EQ(t.added_s, t.transfer_s);  // serial by default

  const nlohmann::json j = nlohmann::json::parse(read_file(out / "summary.json"));
  EXPECT_EQ(j.at("tiers").at("cpu").at("hit_tokens").get<std::int64_t>(), t.cpu.hit_tokens);
  // Every iteration is a row (stride 1): the columns add up to the summary.
  const std::vector<Row> rows = parse_csv(read_file(out / "iterations.csv"));
  EXPECT_EQ(column_sum(rows, "cpu_hit_tokens"), static_cast<double>(t.cpu.hit_tokens));
  EXPECT_EQ(column_sum(rows, "gpu_hit_tokens"), static_cast<double>(t.gpu_hit_tokens));
  EXPECT_DOUBLE_EQ(column_sum(rows, "disk_write_bytes"), t.disk.write_bytes);
  EXPECT_NEAR(column_sum(rows, "tier_transfer_s"), t.transfer_s, 1e-9 * t.transfer_s);
  EXPECT_NE(read_file(out / "config.resolved.yaml").find("offload:"), std::string::npos);
}

TEST_F(OffloadTiersTest, OverlapSweepFlattensTierKeysAndNeverAddsMoreThanSerial) {
  const fs::path out = dir_ / "sweep";
  const auto res = run_experiment_file(
      write("sweep.yaml", tiers_experiment("sweep:\n  allocator.offload.overlap: [false, true]\n")), {}, out);
  ASSERT_EQ(res.size(), 2u);
  ASSERT_TRUE(res[0].summary.tiers && res[1].summary.tiers);
  EXPECT_LT(res[1].summary.tiers->added_s, res[0].summary.tiers->added_s);
  EXPECT_LE(res[1].summary.e2e_s.mean, res[0].summary.e2e_s.mean);
  const std::string header = read_file(out / "sweep.csv").substr(0, read_file(out / "sweep.csv").find('\n'));
  EXPECT_NE(header.find("tiers.cpu.hit_rate"), std::string::npos) << header;
  EXPECT_NE(header.find("tiers.prefill_saved_s"), std::string::npos) << header;
}

}  // namespace
}  // namespace pagesim::sim

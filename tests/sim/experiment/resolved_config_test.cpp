// config.resolved.yaml reruns its run: for every scheduler kind x allocator kind the config
// accepts (with and without a prefix cache), a tiny experiment's resolved config runs again
// to the same output files, byte for byte (summary.json without its host timings), and to the
// same resolved config. Combinations the config refuses are skipped.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "allocator/make_allocator.h"
#include "sim/config/config_error.h"
#include "sim/config/experiment_config.h"
#include "sim/experiment/experiment.h"
#include "sim/scheduler/scheduler_settings.h"
#include "temp_dir_test.h"

namespace pagesim::sim {
namespace {

namespace fs = std::filesystem;
using testing::read_file;

const std::string kMooncake = (fs::path(PAGESIM_SOURCE_DIR) / "traces/data/mooncake_conversation_trace.jsonl").string();

class ResolvedConfigTest : public testing::TempDirTest {};

nlohmann::json without_host_timings(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text);
  for (const char* k : {"wall_s", "sim_seconds_per_wall_second", "iterations_per_wall_second"}) j.erase(k);
  return j;
}

TEST_F(ResolvedConfigTest, EverySchedulerAndAllocatorKindRerunsToTheSameBytes) {
  int ran = 0;
  for (const auto& [scheduler, scheduler_name] : kSchedulerKindNames) {
    for (const auto& [allocator, allocator_name] : alloc::kAllocatorKindNames) {
      for (const bool prefix : {false, true}) {
        const std::string label =
            std::string(scheduler_name) + "-" + std::string(allocator_name) + (prefix ? "-prefix" : "");
        SCOPED_TRACE(label);
        const std::string file = write(label + ".yaml",
                                       "name: tiny\n"
                                       "seed: 2\n"
                                       "workload:\n"
                                       "  kind: trace\n"
                                       "  trace: {path: '" + kMooncake + "', format: mooncake}\n"
                                       "  max_requests: 12\n"
                                       "  oversize: truncate\n"
                                       "model: llama-3-8b\n"
                                       "gpu: h200\n"
                                       "max_model_len: off\n"
                                       "kv: {slots: 262144}\n"
                                       "allocator: {kind: " + std::string(allocator_name) +
                                       (prefix ? ", prefix_cache: true" : "") + "}\n"
                                       "scheduler: {kind: " + std::string(scheduler_name) + "}\n"
                                       "cost: {kind: roofline}\n");
        const fs::path a = dir_ / label / "a", b = dir_ / label / "b";
        try {
          run_experiment_file(file, {}, a);
        } catch (const ConfigError&) {
          continue;  // a combination the config refuses (reading it, or building its run)
        } catch (const std::exception& e) {
          ADD_FAILURE() << "the experiment does not run: " << e.what();
          continue;
        }
        try {
          run_experiment_file((a / "config.resolved.yaml").string(), {}, b);
        } catch (const std::exception& e) {
          ADD_FAILURE() << "config.resolved.yaml does not run: " << e.what() << "\n" << read_file(a / "config.resolved.yaml");
          continue;
        }
        ++ran;
        for (const auto& entry : fs::directory_iterator(a)) {
          const std::string name = entry.path().filename().string();
          if (name == "summary.json") {
            EXPECT_EQ(without_host_timings(read_file(a / name)), without_host_timings(read_file(b / name)));
          } else {
            EXPECT_TRUE(fs::exists(b / name)) << name;
            EXPECT_EQ(read_file(a / name), read_file(b / name)) << name;
          }
        }
      }
    }
  }
  EXPECT_GE(ran, 10);
}

}  // namespace
}  // namespace pagesim::sim

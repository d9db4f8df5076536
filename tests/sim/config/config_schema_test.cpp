// The experiment reference generated from the reader's field list (sim/config/config_schema.h):
// the committed docs/experiment-keys.md and docs/experiment.schema.json are current, the
// schema holds every key the reader takes with its names, and the table names every key.
// (tests/python/docs/schema_test.py validates every bundled experiment against the schema.)
#include "sim/config/config_schema.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/config/experiment_config.h"
#include "temp_dir_test.h"

namespace pagesim::sim {
namespace {

namespace fs = std::filesystem;
const fs::path kDocs = fs::path(PAGESIM_SOURCE_DIR) / "docs";

TEST(ConfigSchema, CommittedCopiesAreCurrent) {
  EXPECT_EQ(testing::read_file(kDocs / "experiment-keys.md"), experiment_keys_markdown())
      << "docs/experiment-keys.md is stale: run `build/pagesim keys > docs/experiment-keys.md`";
  EXPECT_EQ(testing::read_file(kDocs / "experiment.schema.json"), experiment_json_schema())
      << "docs/experiment.schema.json is stale: run `build/pagesim schema > docs/experiment.schema.json`";
}

TEST(ConfigSchema, SchemaHoldsTheReadersKeysAndNames) {
  const nlohmann::json s = nlohmann::json::parse(experiment_json_schema());
  EXPECT_EQ(s["additionalProperties"], false);
  const nlohmann::json& p = s["properties"];
  const auto kinds = p["scheduler"]["properties"]["kind"]["enum"];
  for (const char* k : {"vllm", "vllm-v0", "vllm-v1", "sarathi", "sglang", "orca", "static"})
    EXPECT_NE(std::find(kinds.begin(), kinds.end(), k), kinds.end()) << k;
  EXPECT_EQ(p["allocator"]["properties"]["block_size"]["default"], 16);
  EXPECT_EQ(p["allocator"]["additionalProperties"], false);
  // model: a preset name or a custom model's section.
  const nlohmann::json& model = p["model"]["anyOf"];
  ASSERT_EQ(model.size(), 2u);
  EXPECT_NE(std::find(model[0]["enum"].begin(), model[0]["enum"].end(), "llama-3-8b"), model[0]["enum"].end());
  EXPECT_TRUE(model[1]["properties"].contains("hf_config"));
  EXPECT_TRUE(model[1]["properties"]["mla"]["properties"].contains("kv_lora_rank"));
  // replicas: a count or a section; sweep axes name known keys.
  EXPECT_EQ(p["replicas"]["anyOf"][0]["type"], "integer");
  const auto axes = p["sweep"]["propertyNames"]["enum"];
  for (const char* k : {"cases", "allocator.block_size", "scheduler.kind", "model", "workload.arrival.rate"})
    EXPECT_NE(std::find(axes.begin(), axes.end(), k), axes.end()) << k;
}

TEST(ConfigSchema, TableNamesEveryKey) {
  const std::string md = experiment_keys_markdown();
  std::function<void(const std::vector<KeyInfo>&, const std::string&)> check = [&](const auto& keys,
                                                                                    const std::string& prefix) {
    for (const KeyInfo& k : keys) {
      const std::string path = prefix.empty() ? k.key : prefix + "." + k.key;
      if (k.type == KeyInfo::Type::kSection) {
        check(k.children, path);
      } else if (k.key != "sweep" && k.key != "overrides") {
        EXPECT_NE(md.find("| `" + path + "` |"), std::string::npos) << path;
      }
      if (k.type == KeyInfo::Type::kList) check(k.children, path + "[]");
      if (k.type == KeyInfo::Type::kStringOrSection) check(k.children, path);
    }
  };
  check(experiment_keys(), "");
}

// Issue 41: every key has a one-line meaning in the field list, in the table and the schema.
TEST(ConfigSchema, EveryKeyHasAMeaning) {
  const std::string md = experiment_keys_markdown();
  std::function<void(const std::vector<KeyInfo>&, const std::string&)> check = [&](const auto& keys,
                                                                                    const std::string& prefix) {
    for (const KeyInfo& k : keys) {
      const std::string path = prefix.empty() ? k.key : prefix + "." + k.key;
      if (k.type == KeyInfo::Type::kSection) {
        check(k.children, path);
        continue;
      }
      EXPECT_FALSE(k.meaning.empty()) << path << ": no meaning in the field list";
      EXPECT_EQ(k.meaning.find('|'), std::string::npos) << path << ": a '|' would split the table's row";
      EXPECT_EQ(k.meaning.find('\n'), std::string::npos) << path << ": one line";
      if (k.key != "sweep" && k.key != "overrides") {
        EXPECT_NE(md.find("| `" + path + "` | " + k.meaning + " |"), std::string::npos) << path;
      }
      if (k.type == KeyInfo::Type::kList) check(k.children, path + "[]");
      if (k.type == KeyInfo::Type::kStringOrSection) check(k.children, path);
    }
  };
  check(experiment_keys(), "");
  const nlohmann::json s = nlohmann::json::parse(experiment_json_schema());
  EXPECT_EQ(s["properties"]["allocator"]["properties"]["block_size"]["description"],
            "tokens per KV block (radix: per page)");
}

}  // namespace
}  // namespace pagesim::sim

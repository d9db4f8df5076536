// The `speculative` section: defaults, the to_yaml() round trip (a rate or a list of
// acceptances), and errors that name the key: num_speculative_tokens out of range, an
// acceptance outside [0, 1] or of the wrong length, a scheduler or allocator speculation
// cannot run on, keys of another method.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sim/config/config_error.h"
#include "sim/config/experiment_config.h"
#include "throws_config_error.h"

namespace pagesim::sim {
namespace {

constexpr const char* kFile = "exp.yaml";
constexpr const char* kV1 = "scheduler: {kind: vllm-v1}\nallocator: {kind: paged}\n";

ExperimentConfig parse(const std::string& yaml) { return parse_experiment(YAML::Load(yaml), kFile); }

// Expects a ConfigError on `key`, at whichever line, whose text holds every one of `words`.
::testing::AssertionResult fails_with(const std::string& yaml, const std::string& key,
                                      const std::vector<std::string>& words) {
  return testing::throws_config_error([&] { parse(yaml); }, kFile, testing::kAnyLine, key, words);
}

TEST(SpeculativeConfig, OffByDefaultAndNotWritten) {
  const ExperimentConfig c = parse("name: x\n");
  EXPECT_FALSE(c.speculative.settings.enabled());
  EXPECT_FALSE(to_yaml(c)["speculative"]);
}

TEST(SpeculativeConfig, ReadsARateOrAListAndWritesThemBack) {
  const ExperimentConfig c =
      parse(std::string(kV1) + "speculative: {method: eagle, num_speculative_tokens: 3, acceptance: 0.8}\n");
  EXPECT_EQ(c.speculative.settings.method, SpeculativeMethod::kEagle);
  EXPECT_EQ(c.speculative.settings.k, 3);
  EXPECT_EQ(c.speculative.settings.acceptance, std::vector<double>{0.8});
  EXPECT_EQ(c.speculative.settings.draft_kv, DraftKvPlacement::kShared);  // vLLM's: in the KV budget
  EXPECT_NEAR(c.speculative.settings.expected_accepted(3), 0.8 + 0.64 + 0.512, 1e-12);
  YAML::Emitter e;
  e << to_yaml(c);
  const ExperimentConfig back = parse(e.c_str());
  EXPECT_EQ(back.speculative.settings.acceptance, c.speculative.settings.acceptance);
  EXPECT_EQ(back.speculative.settings.k, 3);

  const ExperimentConfig l = parse(std::string(kV1) +
                                   "speculative: {method: ngram, num_speculative_tokens: 3, acceptance: [0.9, 0.5, 0.2]}\n");
  EXPECT_EQ(l.speculative.settings.draft_kv, DraftKvPlacement::kNone);
  EXPECT_NEAR(l.speculative.settings.expected_accepted(3), 0.9 + 0.45 + 0.09, 1e-12);
  YAML::Emitter e2;
  e2 << to_yaml(l);
  EXPECT_EQ(parse(e2.c_str()).speculative.settings.acceptance, (std::vector<double>{0.9, 0.5, 0.2}));
}

TEST(SpeculativeConfig, BadValuesNameTheKey) {
  const std::string v1 = kV1;
  EXPECT_TRUE(fails_with(v1 + "speculative: {method: eagle, num_speculative_tokens: -1}\n",
                         "speculative.num_speculative_tokens", {"[0, 64]", "-1"}));
  EXPECT_TRUE(fails_with(v1 + "speculative: {method: eagle, num_speculative_tokens: 65}\n",
                         "speculative.num_speculative_tokens", {"65"}));
  EXPECT_TRUE(fails_with(v1 + "speculative: {method: eagle, num_speculative_tokens: 2, acceptance: 1.5}\n",
                         "speculative.acceptance", {"[0, 1]", "1.5"}));
  EXPECT_TRUE(fails_with(v1 + "speculative: {method: eagle, num_speculative_tokens: 2, acceptance: [0.5, -0.1]}\n",
                         "speculative.acceptance", {"[0, 1]", "position 2"}));
  EXPECT_TRUE(fails_with(v1 + "speculative: {method: eagle, num_speculative_tokens: 3, acceptance: [0.5, 0.4]}\n",
                         "speculative.acceptance", {"one probability or num_speculative_tokens = 3", "found 2"}));
  EXPECT_TRUE(fails_with(v1 + "speculative: {method: eagle, num_speculative_tokens: 2, acceptance: high}\n",
                         "speculative.acceptance", {"probability in [0, 1]"}));
  EXPECT_TRUE(fails_with(v1 + "speculative: {method: eagle, num_speculative_tokens: 2, acceptance: [0.5, [1]]}\n",
                         "speculative.acceptance[1]", {"probability"}));
  EXPECT_TRUE(fails_with(v1 + "speculative: {method: medusa}\n", "speculative.method", {"draft_model", "eagle", "ngram"}));
  EXPECT_TRUE(fails_with(v1 + "speculative: {num_speculative_tokens: 2}\n", "speculative.method", {"method is none"}));
  EXPECT_TRUE(fails_with(v1 + "speculative: {method: eagle, k: 2}\n", "speculative.k", {"unknown key"}));
  EXPECT_TRUE(fails_with(v1 + "speculative: {method: draft_model, num_speculative_tokens: 2}\n",
                         "speculative.draft_model", {"preset"}));
  EXPECT_TRUE(fails_with(v1 + "speculative: {method: eagle, draft_model: llama-2-7b}\n", "speculative.draft_model",
                         {"method is 'eagle'"}));
  EXPECT_TRUE(fails_with(v1 + "speculative: {method: ngram, draft_kv: shared}\n", "speculative.draft_kv", {"none"}));
  EXPECT_TRUE(fails_with(v1 + "speculative: {method: eagle, eagle_layers: 0}\n", "speculative.eagle_layers", {"[1, 64]"}));
  EXPECT_TRUE(fails_with(v1 + "speculative: {method: ngram, eagle_layers: 2}\n", "speculative.eagle_layers", {"not eagle"}));
  EXPECT_TRUE(fails_with(v1 + "speculative: {method: ngram, draft_cost_ratio: -2}\n", "speculative.draft_cost_ratio",
                         {">= 0"}));
  EXPECT_TRUE(fails_with("scheduler: {kind: vllm}\nspeculative: {method: ngram, num_speculative_tokens: 2}\n",
                         "speculative.method", {"vllm-v1", "'vllm'"}));
  EXPECT_TRUE(fails_with("scheduler: {kind: vllm-v1}\nallocator: {kind: hybrid}\n"
                         "speculative: {method: ngram, num_speculative_tokens: 2}\n",
                         "allocator.kind", {"paged", "hybrid"}));
}

}  // namespace
}  // namespace pagesim::sim

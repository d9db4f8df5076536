// Close names (sim/core/close_names.h): the "did you mean ...?" of every unknown name.
#include "sim/core/close_names.h"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace pagesim::sim {
namespace {

TEST(CloseNames, DistanceCountsEditsAndSwapsIgnoringCase) {
  EXPECT_EQ(name_distance("run", "run"), 0u);
  EXPECT_EQ(name_distance("rnu", "run"), 1u);  // two neighbours swapped
  EXPECT_EQ(name_distance("blok_size", "block_size"), 1u);
  EXPECT_EQ(name_distance("LLaMA-3-8B", "llama-3-8b"), 0u);
  EXPECT_EQ(name_distance("", "abc"), 3u);
  EXPECT_EQ(name_distance("kitten", "sitting"), 3u);
}

TEST(CloseNames, SuggestsTheNearestNamesOnly) {
  const std::array<std::string_view, 6> models = {"llama-2-7b", "llama-3-8b", "llama-3-70b", "llama-3.1-8b",
                                                  "opt-13b",    "qwen3-14b"};
  EXPECT_EQ(did_you_mean("llama3-8b", models), "did you mean llama-3-8b?");
  EXPECT_EQ(did_you_mean("opt-13", models), "did you mean opt-13b?");
  EXPECT_EQ(did_you_mean("gpt-5", models), "");           // nothing close
  EXPECT_EQ(did_you_mean("llama-3-8b", models), "");      // a name of the list needs no suggestion
  const std::vector<std::string> commands = {"run", "trace", "validate", "profile", "model", "presets"};
  EXPECT_EQ(did_you_mean("rnu", commands), "did you mean run?");
  EXPECT_EQ(did_you_mean("preset", commands), "did you mean presets?");
  EXPECT_EQ(did_you_mean("x", commands), "");
}

TEST(CloseNames, ANameTheTypedOneBeginsIsClose) {
  const std::array<std::string_view, 5> gpus = {"a100-40gb", "a100-80gb", "h100-sxm", "h200", "l40s"};
  EXPECT_EQ(did_you_mean("h100", gpus), "did you mean h100-sxm or h200?");
  EXPECT_EQ(did_you_mean("a100", gpus), "did you mean a100-40gb or a100-80gb?");
  EXPECT_EQ(did_you_mean("h1", gpus), "");  // too short to be a prefix, and two edits from h200
}

TEST(CloseNames, ListsSeveralAsASentence) {
  const std::array<std::string_view, 4> names = {"vllm", "vllm-v0", "vllm-v1", "orca"};
  EXPECT_EQ(did_you_mean("vllm-v2", names), "did you mean vllm-v0 or vllm-v1?");
  const std::array<std::string_view, 4> four = {"ab1", "ab2", "ab3", "ab4"};
  EXPECT_EQ(close_names("ab", four).size(), 3u);  // at most three
  EXPECT_EQ(did_you_mean("ab", four), "did you mean ab1, ab2 or ab3?");
}

}  // namespace
}  // namespace pagesim::sim

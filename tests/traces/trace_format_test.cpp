#include "traces/trace_format.h"

#include <gtest/gtest.h>

#include <set>
#include <string_view>

#include "test_util.h"

namespace pagesim::traces {
namespace {

using testing::ScratchDir;

TEST(DetectFormat, FixturesAndBundledFiles) {
  EXPECT_EQ(detect_format(testing::fixture("native_small.csv")), TraceFormat::kNative);
  EXPECT_EQ(detect_format(testing::fixture("vidur_small.csv")), TraceFormat::kVidur);
  EXPECT_EQ(detect_format(testing::fixture("azure_small.csv")), TraceFormat::kAzure);
  EXPECT_EQ(detect_format(testing::fixture("mooncake_small.jsonl")), TraceFormat::kMooncake);
  EXPECT_EQ(detect_format(testing::fixture("lengths_small.csv")), TraceFormat::kLengths);
  EXPECT_EQ(detect_format(testing::fixture("lengths_vidur_style.csv")), TraceFormat::kLengths);
  EXPECT_EQ(detect_format(testing::bundled("sharegpt_opt_lengths.csv")), TraceFormat::kLengths);
  EXPECT_EQ(detect_format(testing::bundled("azure2023_code.csv")), TraceFormat::kAzure);
  EXPECT_EQ(detect_format(testing::bundled("azure2023_conv.csv")), TraceFormat::kAzure);
  EXPECT_EQ(detect_format(testing::bundled("mooncake_conversation_trace.jsonl")),
            TraceFormat::kMooncake);
  EXPECT_EQ(detect_format(testing::bundled("lengths_sharegpt_8k_filtered_stats_llama2_tokenizer.csv")),
            TraceFormat::kLengths);
}

TEST(DetectFormat, UnknownHeaderAndEmptyFile) {
  ScratchDir dir;
  const std::string p = dir.write("u.csv", "a,b,c\n1,2,3\n");
  auto e = testing::catch_trace_error([&] { detect_format(p); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->line(), 1);
  EXPECT_NE(std::string(e->what()).find("header: expected a known trace header"), std::string::npos);
  EXPECT_NE(std::string(e->what()).find("found the columns a, b, c"), std::string::npos);
  const std::string empty = dir.write("e.csv", "");
  e = testing::catch_trace_error([&] { detect_format(empty); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()), empty + ": expected a trace file, found an empty file");
}

TEST(OpenTrace, OpensTheDetectedReader) {
  auto native = open_trace(testing::fixture("native_small.csv"));
  EXPECT_EQ(testing::drain(*native).size(), 4u);
  auto mooncake = open_trace(testing::fixture("mooncake_small.jsonl"));
  EXPECT_EQ(mooncake->hash_block_tokens(), 512);
  auto azure = open_trace(testing::fixture("azure_small.csv"), testing::format_options(TraceFormat::kAzure, 0));
  EXPECT_EQ(testing::drain(*azure).size(), 4u);
}

TEST(OpenTrace, ExplicitFormatMustMatchTheFile) {
  const auto e = testing::catch_trace_error(
      [] { open_trace(testing::fixture("azure_small.csv"), testing::format_options(TraceFormat::kVidur, 0)); });
  ASSERT_TRUE(e);
  EXPECT_NE(std::string(e->what()).find("expected a column 'arrived_at'"), std::string::npos);
}

TEST(OpenTrace, HashBlockOverride) {
  ScratchDir dir;
  const std::string p = dir.write(
      "m.jsonl", "{\"timestamp\": 0, \"input_length\": 40, \"output_length\": 1, \"hash_ids\": [1, 2, 3]}\n");
  auto source = open_trace(p, testing::format_options(TraceFormat::kAuto, 16));
  EXPECT_EQ(source->hash_block_tokens(), 16);
  EXPECT_EQ(testing::drain(*source).size(), 1u);
  EXPECT_THROW(open_trace(p, testing::format_options(TraceFormat::kAuto, -1)), SpecError);
}

TEST(OpenTrace, LengthsFileIsRefused) {
  const auto e = testing::catch_trace_error([] { open_trace(testing::fixture("lengths_small.csv")); });
  ASSERT_TRUE(e);
  EXPECT_NE(std::string(e->what()).find("found a lengths-only file"), std::string::npos);
}

// Each format is listed once under its own name (to_string of an entry's value gives that
// entry's name, so no value repeats; the set shows no name does).
TEST(TraceFormat, Names) {
  std::set<std::string_view> names;
  for (const auto& [format, name] : kTraceFormatNames) {
    EXPECT_EQ(to_string(format), name);
    names.insert(name);
  }
  EXPECT_EQ(names.size(), kTraceFormatNames.size());
  EXPECT_EQ(to_string(TraceFormat::kMooncake), "mooncake");
  EXPECT_EQ(to_string(static_cast<TraceFormat>(99)), "?");
}

}  // namespace
}  // namespace pagesim::traces

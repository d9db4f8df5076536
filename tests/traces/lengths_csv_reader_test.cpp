#include "traces/lengths_csv_reader.h"

#include <gtest/gtest.h>

#include "test_util.h"
#include "traces/arrival_process.h"
#include "traces/lengths_csv_source.h"

namespace pagesim::traces {
namespace {

using testing::BadInput;
using testing::drain;
using testing::ScratchDir;

std::vector<LengthRow> read_lengths(const std::string& path, const LengthColumns& columns = {}) {
  LengthsCsvReader reader(path, columns);
  std::vector<LengthRow> out;
  while (auto r = reader.next()) out.push_back(*r);
  return out;
}

TEST(LengthsCsvReader, DetectsInputOutputColumns) {
  LengthsCsvReader reader(testing::fixture("lengths_small.csv"));
  EXPECT_EQ(reader.prompt_column(), "input_tokens");
  EXPECT_EQ(reader.output_column(), "output_tokens");
  const auto rows = read_lengths(testing::fixture("lengths_small.csv"));
  EXPECT_EQ(rows, (std::vector<LengthRow>{{10, 20}, {2000, 47}, {1, 0}, {1000, 1048}}));
}

TEST(LengthsCsvReader, DetectsPrefillDecodeColumns) {
  LengthsCsvReader reader(testing::fixture("lengths_vidur_style.csv"));
  EXPECT_EQ(reader.prompt_column(), "num_prefill_tokens");
  EXPECT_EQ(reader.output_column(), "num_decode_tokens");
  EXPECT_EQ(read_lengths(testing::fixture("lengths_vidur_style.csv")),
            (std::vector<LengthRow>{{74, 918}, {290, 905}}));
}

TEST(LengthsCsvReader, NamedColumnsOverrideDetection) {
  ScratchDir dir;
  const std::string p = dir.write("n.csv", "a,input_tokens,b,output_tokens\n1,2,3,4\n");
  EXPECT_EQ(read_lengths(p, {"b", "a"}), (std::vector<LengthRow>{{3, 1}}));
  EXPECT_EQ(read_lengths(p), (std::vector<LengthRow>{{2, 4}}));
}

TEST(LoadLengths, FiltersStrictlyBelowTheLimit) {
  const std::string p = testing::fixture("lengths_small.csv");
  // Totals: 30, 2047, 1, 2048.
  LengthTable t = load_lengths(p, {}, 2048);
  EXPECT_EQ(t.rows_read, 4u);
  EXPECT_EQ(t.rows, (std::vector<LengthRow>{{10, 20}, {2000, 47}, {1, 0}}));
  EXPECT_EQ(load_lengths(p, {}, 0).rows.size(), 4u);
  EXPECT_EQ(load_lengths(p, {}, 2).rows, (std::vector<LengthRow>{{1, 0}}));
  EXPECT_EQ(t.path, p);
}

TEST(LengthsCsvSource, PairsRowsInFileOrderWithArrivalsAndSkipsFilteredRows) {
  LengthsCsvSource source(testing::fixture("lengths_small.csv"), {},
                          make_arrival_process({.kind = ArrivalKind::kConstant, .rate = 2.0}, 1),
                          2048);
  const auto rows = drain(source);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], (TraceRequest{0, 0.0, 10, 20, 1, 1, {}}));
  EXPECT_EQ(rows[1], (TraceRequest{1, 0.5, 2000, 47, 1, 1, {}}));
  EXPECT_EQ(rows[2], (TraceRequest{2, 1.0, 1, 0, 1, 1, {}}));
  EXPECT_EQ(source.rows_skipped(), 1u);
}

const BadInput kBadLengths[] = {
    {"no_prompt_column", "foo,output_tokens\n1,2\n", 1,
     "header: expected a prompt-length column, one of input_tokens, num_prefill_tokens, "
     "prompt_tokens, input_length, ContextTokens, found the columns foo, output_tokens"},
    {"no_output_column", "input_tokens,bar\n1,2\n", 1, "expected an output-length column, one of output_tokens"},
    {"ambiguous", "input_tokens,num_prefill_tokens,output_tokens\n1,1,1\n", 1,
     "header: expected one prompt-length column (name it in the workload spec), found both "
     "'input_tokens' and 'num_prefill_tokens'"},
    {"zero_prompt", "input_tokens,output_tokens\n5,5\n0,5\n", 3,
     "column 'input_tokens': expected a positive integer, found '0'"},
    {"negative_output", "input_tokens,output_tokens\n5,-5\n", 2,
     "column 'output_tokens': expected a non-negative integer, found '-5'"},
    {"text", "input_tokens,output_tokens\nfive,5\n", 2, "found 'five'"},
    {"field_count", "input_tokens,output_tokens\n5\n", 2, "expected 2 fields as in the header, found 1"},
    {"blank_line_inside", "input_tokens,output_tokens\n5,5\n \n5,5\n", 3, "found a blank line"},
};

class LengthsBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(LengthsBadInput, NamesFileLineAndProblem) {
  testing::expect_bad_file("bad.csv", GetParam(), [](const std::string& p) { load_lengths(p); });
}

INSTANTIATE_TEST_SUITE_P(Cases, LengthsBadInput, ::testing::ValuesIn(kBadLengths),
                         testing::bad_input_name);

TEST(LengthsCsvReader, NamedColumnMissing) {
  const auto e = testing::catch_trace_error(
      [] { LengthsCsvReader r(testing::fixture("lengths_small.csv"), {"prompt", ""}); });
  ASSERT_TRUE(e);
  EXPECT_NE(std::string(e->what()).find("expected a column 'prompt'"), std::string::npos);
}

}  // namespace
}  // namespace pagesim::traces

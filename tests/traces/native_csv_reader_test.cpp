#include "traces/native_csv_reader.h"

#include <gtest/gtest.h>

#include <vector>

#include "test_util.h"

namespace pagesim::traces {
namespace {

using testing::BadInput;
using testing::drain;
using testing::ScratchDir;

std::vector<TraceRequest> read_native(const std::string& path, NativeCsvOptions options = {}) {
  NativeCsvReader reader(path, options);
  return drain(reader);
}

TEST(NativeCsvReader, ReadsEveryColumnInAnyOrder) {
  const auto rows = read_native(testing::fixture("native_small.csv"));
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0], (TraceRequest{0, 0.0, 12, 5, 1, 1, {7, 8}}));
  EXPECT_EQ(rows[1], (TraceRequest{1, 0.5, 7, 0, 2, 1, {}}));
  EXPECT_EQ(rows[2], (TraceRequest{2, 0.5, 1, 100, 1, 4, {9}}));
  EXPECT_EQ(rows[3], (TraceRequest{3, 12.5, 3, 2, 1, 1, {7, 8, 10}}));
}

TEST(NativeCsvReader, OptionalColumnsDefault) {
  const auto rows = read_native(testing::fixture("native_minimal.csv"));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (TraceRequest{0, 0.125, 100, 20, 1, 1, {}}));
  EXPECT_EQ(rows[1], (TraceRequest{1, 3.0, 1, 0, 1, 1, {}}));
}

TEST(NativeCsvReader, EndOfStreamIsSticky) {
  NativeCsvReader reader(testing::fixture("native_minimal.csv"));
  EXPECT_TRUE(reader.next());
  EXPECT_TRUE(reader.next());
  EXPECT_FALSE(reader.next());
  EXPECT_FALSE(reader.next());
  EXPECT_EQ(reader.hash_block_tokens(), 0);
  EXPECT_NE(reader.describe().find("native_minimal.csv"), std::string::npos);
}

TEST(NativeCsvReader, AcceptsCrlfBomBlanksAroundFieldsAndTrailingBlankLines) {
  ScratchDir dir;
  const std::string crlf = dir.write(
      "crlf.csv", "\xEF\xBB\xBF" "arrival_s , prompt_tokens,output_tokens\r\n 1.5 ,\t10,2\r\n2,3,4\r\n\r\n  \n");
  const auto rows = read_native(crlf);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (TraceRequest{0, 1.5, 10, 2, 1, 1, {}}));
  EXPECT_EQ(rows[1], (TraceRequest{1, 2.0, 3, 4, 1, 1, {}}));
}

TEST(NativeCsvReader, NoFinalNewlineAndHeaderOnly) {
  ScratchDir dir;
  EXPECT_EQ(read_native(dir.write("a.csv", "arrival_s,prompt_tokens,output_tokens\n0,1,1")).size(), 1u);
  EXPECT_TRUE(read_native(dir.write("b.csv", "arrival_s,prompt_tokens,output_tokens\n")).empty());
  EXPECT_TRUE(read_native(dir.write("c.csv", "arrival_s,prompt_tokens,output_tokens")).empty());
}

TEST(NativeCsvReader, ChecksHashCountWhenBlockSizeGiven) {
  ScratchDir dir;
  const std::string p = dir.write(
      "h.csv", "arrival_s,prompt_tokens,output_tokens,hash_ids\n0,8,1,1 2\n0,9,1,1 2 3\n0,5,1,\n");
  NativeCsvReader ok(p, NativeCsvOptions{4});
  EXPECT_EQ(ok.hash_block_tokens(), 4);
  EXPECT_EQ(drain(ok).size(), 3u);
  const std::string bad =
      dir.write("bad.csv", "arrival_s,prompt_tokens,output_tokens,hash_ids\n0,8,1,1 2\n0,9,1,1 2\n");
  const auto e = testing::catch_trace_error([&] { read_native(bad, NativeCsvOptions{4}); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->line(), 3);
  EXPECT_EQ(std::string(e->what()),
            bad + ":3: column 'hash_ids': expected 3 ids for 9 prompt tokens at 4 tokens per "
                  "hash block, found 2");
}

TEST(NativeCsvReader, MessageFormatMatchesTheDocumentedExample) {
  ScratchDir dir;
  const std::string p = dir.write("x.csv", "arrival_s,prompt_tokens,output_tokens\n0,5,-3\n");
  const auto e = testing::catch_trace_error([&] { read_native(p); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()),
            p + ":2: column 'output_tokens': expected a non-negative integer, found '-3'");
  EXPECT_EQ(e->subject(), "column 'output_tokens'");
  EXPECT_EQ(e->expected(), "a non-negative integer");
  EXPECT_EQ(e->found(), "'-3'");
}

constexpr const char* kHeader = "arrival_s,prompt_tokens,output_tokens\n";

const BadInput kBadNative[] = {
    {"empty_file", "", 0, "expected a header line, found an empty file"},
    {"only_blank_lines", "\n  \n\r\n", 0, "expected a header line, found an empty file"},
    {"missing_column", "arrival_s,prompt_tokens\n0,1\n", 1,
     "header: expected a column 'output_tokens', found the columns arrival_s, prompt_tokens"},
    {"unknown_column", "arrival_s,prompt_tokens,output_tokens,foo\n0,1,1,1\n", 1,
     "unknown column 'foo'"},
    {"duplicate_column", "arrival_s,prompt_tokens,output_tokens,arrival_s\n", 1,
     "header: expected distinct column names, found 'arrival_s' twice"},
    {"too_many_fields", "arrival_s,prompt_tokens,output_tokens\n0,1,1\n0,1,1,1\n", 3,
     "expected 3 fields as in the header, found 4 in '0,1,1,1'"},
    {"too_few_fields", "arrival_s,prompt_tokens,output_tokens\n0,1\n", 2,
     "expected 3 fields as in the header, found 2"},
    {"non_numeric", "arrival_s,prompt_tokens,output_tokens\n0,abc,1\n", 2,
     "column 'prompt_tokens': expected a positive integer, found 'abc'"},
    {"negative_output", "arrival_s,prompt_tokens,output_tokens\n0,1,-3\n", 2,
     "column 'output_tokens': expected a non-negative integer, found '-3'"},
    {"zero_prompt", "arrival_s,prompt_tokens,output_tokens\n0,1,1\n0,0,1\n", 3,
     "column 'prompt_tokens': expected a positive integer, found '0'"},
    {"overflow_int64", "arrival_s,prompt_tokens,output_tokens\n0,99999999999999999999,1\n", 2,
     "column 'prompt_tokens': expected a positive integer no larger than 4294967296, found "
     "'99999999999999999999'"},
    {"too_many_tokens", "arrival_s,prompt_tokens,output_tokens\n0,1,4294967297\n", 2,
     "expected a non-negative integer no larger than 4294967296, found '4294967297'"},
    {"fraction_in_integer", "arrival_s,prompt_tokens,output_tokens\n0,12.5,1\n", 2,
     "column 'prompt_tokens': expected a positive integer, found '12.5'"},
    {"trailing_garbage", "arrival_s,prompt_tokens,output_tokens\n0,12abc,1\n", 2,
     "found '12abc'"},
    {"plus_sign", "arrival_s,prompt_tokens,output_tokens\n0,+12,1\n", 2, "found '+12'"},
    {"empty_field", "arrival_s,prompt_tokens,output_tokens\n0,,1\n", 2,
     "column 'prompt_tokens': expected a positive integer, found ''"},
    {"time_backwards", "arrival_s,prompt_tokens,output_tokens\n1,1,1\n2,1,1\n1.5,1,1\n", 4,
     "column 'arrival_s': expected a time >= 2 s, the previous row's (rows must be in arrival "
     "order), found '1.5'"},
    {"negative_time", "arrival_s,prompt_tokens,output_tokens\n-1,1,1\n", 2,
     "column 'arrival_s': expected a finite non-negative number, found '-1'"},
    {"nan_time", "arrival_s,prompt_tokens,output_tokens\nnan,1,1\n", 2, "found 'nan'"},
    {"inf_time", "arrival_s,prompt_tokens,output_tokens\ninf,1,1\n", 2, "found 'inf'"},
    {"huge_time", "arrival_s,prompt_tokens,output_tokens\n1e999,1,1\n", 2, "found '1e999'"},
    {"comma_decimal_time", "arrival_s,prompt_tokens,output_tokens\n0;5,1,1\n", 2, "found '0;5'"},
    {"zero_n", "arrival_s,prompt_tokens,output_tokens,n\n0,1,1,0\n", 2,
     "column 'n': expected a positive integer, found '0'"},
    {"n_and_beam_width", "arrival_s,prompt_tokens,output_tokens,n,beam_width\n0,10,10,1,4\n0,10,10,4,4\n", 3,
     "columns 'n' and 'beam_width': expected n = 1 or beam_width = 1 (a request is either parallel sampling (n) "
     "or beam search (beam_width)), found n = 4 and beam_width = 4"},
    {"beam_overflows_int32", "arrival_s,prompt_tokens,output_tokens,beam_width\n0,1,1,3000000000\n",
     2, "column 'beam_width': expected a positive integer no larger than 2147483647"},
    {"bad_hash_id", "arrival_s,prompt_tokens,output_tokens,hash_ids\n0,1,1,1 x 3\n", 2,
     "column 'hash_ids': expected space-separated non-negative 64-bit integers, found 'x' in "
     "'1 x 3'"},
    {"negative_hash_id", "arrival_s,prompt_tokens,output_tokens,hash_ids\n0,1,1,-1\n", 2,
     "found '-1' in '-1'"},
    {"hash_id_overflow", "arrival_s,prompt_tokens,output_tokens,hash_ids\n0,1,1,18446744073709551616\n",
     2, "found '18446744073709551616'"},
    {"blank_line_inside", "arrival_s,prompt_tokens,output_tokens\n0,1,1\n\n0,1,1\n", 3,
     "expected a data line (blank lines are allowed only at the end of the file), found a blank "
     "line"},
    {"quoted_field", "arrival_s,prompt_tokens,output_tokens\n0,\"1\",1\n", 2,
     "quoted CSV fields are not supported"},
    {"garbage_row", "arrival_s,prompt_tokens,output_tokens\n\x01\x02,1,1\n", 2,
     "found '\\x01\\x02'"},
};

class NativeCsvBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(NativeCsvBadInput, NamesFileLineAndProblem) {
  testing::expect_bad_file("bad.csv", GetParam(), [](const std::string& p) { read_native(p); });
}

INSTANTIATE_TEST_SUITE_P(Cases, NativeCsvBadInput, ::testing::ValuesIn(kBadNative),
                         testing::bad_input_name);

// A row is parallel sampling or beam search: n > 1 with beam_width > 1 is refused at its
// row, whichever order the columns come in; either one above 1 alone reads.
TEST(NativeCsvReader, NAndBeamWidthBothAboveOneIsAnError) {
  ScratchDir dir;
  const std::string p = dir.write("nb.csv", "beam_width,n,arrival_s,prompt_tokens,output_tokens\n"
                                            "4,1,0,10,10\n1,4,0,10,10\n2,3,1,10,10\n");
  NativeCsvReader reader(p);
  EXPECT_EQ(reader.next()->beam_width, 4);
  EXPECT_EQ(reader.next()->n, 4);
  const auto e = testing::catch_trace_error([&] { reader.next(); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()),
            p + ":4: columns 'n' and 'beam_width': expected n = 1 or beam_width = 1 (a request is either "
                "parallel sampling (n) or beam search (beam_width)), found n = 3 and beam_width = 2");
}

TEST(NativeCsvReader, MissingFileAndDirectory) {
  ScratchDir dir;
  const std::string missing = dir.path("nope.csv");
  auto e = testing::catch_trace_error([&] { read_native(missing); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()), missing + ": expected an existing file, found no such file");
  EXPECT_EQ(e->line(), 0);
  e = testing::catch_trace_error([&] { read_native(dir.path("")); });
  ASSERT_TRUE(e);
  EXPECT_NE(std::string(e->what()).find("expected a file, found a directory"), std::string::npos);
}

TEST(NativeCsvReader, ErrorsComeOnlyWhenTheBadRowIsReached) {
  ScratchDir dir;
  const std::string p = dir.write("late.csv", std::string(kHeader) + "0,1,1\n1,1,1\n2,x,1\n");
  NativeCsvReader reader(p);
  EXPECT_TRUE(reader.next());
  EXPECT_TRUE(reader.next());
  EXPECT_THROW(reader.next(), TraceError);
}

TEST(ParseHashIds, SplitsOnRunsOfSpaces) {
  std::vector<std::uint64_t> ids;
  EXPECT_TRUE(parse_hash_ids("", &ids).empty());
  EXPECT_TRUE(ids.empty());
  EXPECT_TRUE(parse_hash_ids("  1  2 18446744073709551615 ", &ids).empty());
  EXPECT_EQ(ids, (std::vector<std::uint64_t>{1, 2, 18446744073709551615ULL}));
  EXPECT_EQ(parse_hash_ids("1 2x", &ids), "2x");
}

}  // namespace
}  // namespace pagesim::traces

namespace pagesim::traces {
namespace {

// The adapter column names a LoRA adapter (>= 0); an empty field is the base model; a
// negative or non-integer one is refused at its row naming the column.
TEST(NativeCsvReader, AdapterColumnNamesALoraAdapter) {
  ScratchDir dir;
  const std::string p = dir.write("a.csv", "arrival_s,prompt_tokens,output_tokens,adapter\n0,10,1,3\n1,10,1,\n2,10,1,0\n");
  const auto rows = read_native(p);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].adapter, 3);
  EXPECT_EQ(rows[1].adapter, kNoAdapter);
  EXPECT_EQ(rows[2].adapter, 0);
  for (const char* bad : {"-1", "x"}) {
    const std::string q = dir.write("b.csv", std::string("arrival_s,prompt_tokens,output_tokens,adapter\n0,10,1,") + bad + "\n");
    try {
      read_native(q);
      ADD_FAILURE() << bad << " accepted";
    } catch (const TraceError& e) {
      EXPECT_NE(std::string(e.what()).find("adapter"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(":2"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace pagesim::traces

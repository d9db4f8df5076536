#include "traces/mooncake_reader.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace pagesim::traces {
namespace {

using testing::BadInput;
using testing::drain;
using testing::ScratchDir;

std::vector<TraceRequest> read_mooncake(const std::string& path, MooncakeOptions options = {}) {
  MooncakeReader reader(path, options);
  return drain(reader);
}

TEST(MooncakeReader, ReadsEveryKeyInAnyOrder) {
  MooncakeReader reader(testing::fixture("mooncake_small.jsonl"));
  EXPECT_EQ(reader.hash_block_tokens(), 512);
  const auto rows = drain(reader);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], (TraceRequest{0, 0.0, 1000, 10, 1, 1, {0, 1}}));
  EXPECT_EQ(rows[1], (TraceRequest{1, 1.5, 512, 0, 1, 1, {0}}));
  EXPECT_EQ(rows[2], (TraceRequest{2, 1.5005, 1025, 7, 1, 1, {0, 1, 2}}));
}

TEST(MooncakeReader, HashBlockSizeIsAParameter) {
  ScratchDir dir;
  const std::string p = dir.write(
      "b.jsonl", "{\"timestamp\": 0, \"input_length\": 33, \"output_length\": 1, \"hash_ids\": [1, 2, 3]}\r\n");
  EXPECT_THROW(read_mooncake(p), TraceError);  // 33 tokens are 1 block of 512
  EXPECT_EQ(read_mooncake(p, MooncakeOptions{16, true}).size(), 1u);
  EXPECT_EQ(read_mooncake(p, MooncakeOptions{512, false}).size(), 1u);
}

#define ROW(ts, in, out, ids) \
  "{\"timestamp\": " ts ", \"input_length\": " in ", \"output_length\": " out ", \"hash_ids\": " ids "}\n"

const BadInput kBadMooncake[] = {
    {"empty_file", "", 0, "expected one JSON object per line, found an empty file"},
    {"malformed_json", ROW("0", "1", "1", "[0]") "{\"timestamp\": 1, \"input_length\"\n", 2,
     "expected one JSON object per line, found malformed JSON (parse error at line 1, column"},
    {"trailing_garbage", "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [0]} x\n",
     1, "found malformed JSON"},
    {"two_objects", ROW("0", "1", "1", "[0]") "{} {}\n", 2, "found malformed JSON"},
    {"not_an_object", "[1, 2, 3]\n", 1, "expected one JSON object per line, found a JSON array '[1,2,3]'"},
    {"missing_key", "{\"timestamp\": 0, \"input_length\": 1, \"hash_ids\": [0]}\n", 1,
     "expected a key 'output_length', found only the keys hash_ids, input_length, timestamp"},
    {"empty_object", "{}\n", 1, "expected a key 'timestamp', found an empty object"},
    {"string_length", ROW("0", "\"12\"", "1", "[0]"), 1,
     "key 'input_length': expected a positive integer, found '\"12\"'"},
    {"float_length", ROW("0", "12.5", "1", "[0]"), 1,
     "key 'input_length': expected a positive integer, found '12.5'"},
    {"zero_input", ROW("0", "0", "1", "[]"), 1,
     "key 'input_length': expected a positive integer, found '0'"},
    {"negative_output", ROW("0", "1", "-3", "[0]"), 1,
     "key 'output_length': expected a non-negative integer, found '-3'"},
    {"null_output", ROW("0", "1", "null", "[0]"), 1,
     "key 'output_length': expected a non-negative integer, found 'null'"},
    {"huge_input", ROW("0", "18446744073709551615", "1", "[0]"), 1,
     "key 'input_length': expected a positive integer no larger than 4294967296, found "
     "'18446744073709551615'"},
    {"string_timestamp", ROW("\"0\"", "1", "1", "[0]"), 1,
     "key 'timestamp': expected a finite non-negative number of milliseconds, found '\"0\"'"},
    {"negative_timestamp", ROW("-5", "1", "1", "[0]"), 1,
     "key 'timestamp': expected a finite non-negative number of milliseconds, found '-5'"},
    {"overflowing_timestamp", ROW("1e999", "1", "1", "[0]"), 1, "found malformed JSON"},
    {"timestamp_backwards", ROW("10", "1", "1", "[0]") ROW("20", "1", "1", "[0]") ROW("19.5", "1", "1", "[0]"),
     3, "key 'timestamp': expected a time >= 20 ms, the previous line's (lines must be in arrival "
        "order), found '19.5'"},
    {"hash_ids_not_array", ROW("0", "1", "1", "7"), 1,
     "key 'hash_ids': expected an array of non-negative integers, found '7'"},
    {"hash_id_string", ROW("0", "513", "1", "[1, \"2\"]"), 1,
     "key 'hash_ids': expected an array of non-negative 64-bit integers, found '\"2\"'"},
    {"hash_id_negative", ROW("0", "1", "1", "[-1]"), 1, "found '-1'"},
    {"hash_id_float", ROW("0", "1", "1", "[1.0]"), 1, "found '1.0'"},
    {"hash_count", ROW("0", "1000", "1", "[0, 1]") ROW("0", "1025", "1", "[0, 1]"), 2,
     "key 'hash_ids': expected 3 ids for input_length 1025 at 512 tokens per hash block, found 2 ids"},
    {"blank_line_inside", ROW("0", "1", "1", "[0]") "\n" ROW("0", "1", "1", "[0]"), 2,
     "found a blank line"},
    {"csv_instead", "arrival_s,prompt_tokens,output_tokens\n", 1, "found malformed JSON"},
};

#undef ROW

class MooncakeBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(MooncakeBadInput, NamesFileLineAndProblem) {
  testing::expect_bad_file("bad.jsonl", GetParam(), [](const std::string& p) { read_mooncake(p); });
}

INSTANTIATE_TEST_SUITE_P(Cases, MooncakeBadInput, ::testing::ValuesIn(kBadMooncake),
                         testing::bad_input_name);

TEST(MooncakeReader, MissingFile) {
  const auto e = testing::catch_trace_error([] { read_mooncake("/nonexistent/trace.jsonl"); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()),
            "/nonexistent/trace.jsonl: expected an existing file, found no such file");
}

}  // namespace
}  // namespace pagesim::traces

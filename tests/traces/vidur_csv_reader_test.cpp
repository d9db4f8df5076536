#include "traces/vidur_csv_reader.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace pagesim::traces {
namespace {

using testing::BadInput;
using testing::drain;
using testing::ScratchDir;

std::vector<TraceRequest> read_vidur(const std::string& path) {
  VidurCsvReader reader(path);
  return drain(reader);
}

TEST(VidurCsvReader, ReadsTheThreeColumnsAndIgnoresOthers) {
  const auto rows = read_vidur(testing::fixture("vidur_small.csv"));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], (TraceRequest{0, 0.0, 74, 918, 1, 1, {}}));
  EXPECT_EQ(rows[1], (TraceRequest{1, 0.75, 290, 905, 1, 1, {}}));
  EXPECT_EQ(rows[2], (TraceRequest{2, 2.5, 1680, 0, 1, 1, {}}));  // pd_ratio 'inf' is ignored
}

TEST(VidurCsvReader, ColumnsInAnyOrder) {
  ScratchDir dir;
  const auto rows = read_vidur(dir.write(
      "v.csv", "num_decode_tokens,extra,arrived_at,num_prefill_tokens\r\n5,zz,0.5,6\r\n"));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0], (TraceRequest{0, 0.5, 6, 5, 1, 1, {}}));
}

const BadInput kBadVidur[] = {
    {"missing_arrived_at", "num_prefill_tokens,num_decode_tokens\n1,1\n", 1,
     "header: expected a column 'arrived_at'"},
    {"missing_decode", "arrived_at,num_prefill_tokens\n0,1\n", 1,
     "expected a column 'num_decode_tokens'"},
    {"non_numeric_time", "arrived_at,num_prefill_tokens,num_decode_tokens\nabc,1,1\n", 2,
     "column 'arrived_at': expected a finite non-negative number, found 'abc'"},
    {"backwards", "arrived_at,num_prefill_tokens,num_decode_tokens\n3,1,1\n2.9,1,1\n", 3,
     "column 'arrived_at': expected a time >= 3 s"},
    {"zero_prefill", "arrived_at,num_prefill_tokens,num_decode_tokens\n0,0,1\n", 2,
     "column 'num_prefill_tokens': expected a positive integer, found '0'"},
    {"float_decode", "arrived_at,num_prefill_tokens,num_decode_tokens\n0,1,3.0\n", 2,
     "column 'num_decode_tokens': expected a non-negative integer, found '3.0'"},
    {"field_count", "arrived_at,num_prefill_tokens,num_decode_tokens,pd_ratio\n0,1,1\n", 2,
     "expected 4 fields as in the header, found 3"},
};

class VidurBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(VidurBadInput, NamesFileLineAndProblem) {
  testing::expect_bad_file("bad.csv", GetParam(), [](const std::string& p) { read_vidur(p); });
}

INSTANTIATE_TEST_SUITE_P(Cases, VidurBadInput, ::testing::ValuesIn(kBadVidur),
                         testing::bad_input_name);

}  // namespace
}  // namespace pagesim::traces

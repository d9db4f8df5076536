#include "traces/azure_csv_reader.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace pagesim::traces {
namespace {

using testing::BadInput;
using testing::drain;

std::vector<TraceRequest> read_azure(const std::string& path) {
  AzureCsvReader reader(path);
  return drain(reader);
}

TEST(AzureCsvReader, ReadsCrlfFileWithoutFinalNewline) {
  AzureCsvReader reader(testing::fixture("azure_small.csv"));
  const auto rows = drain(reader);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0], (TraceRequest{0, 0.0, 4808, 10, 1, 1, {}}));
  EXPECT_EQ(rows[1], (TraceRequest{1, 0.052, 3180, 8, 1, 1, {}}));
  EXPECT_EQ(rows[2], (TraceRequest{2, 0.052, 10, 0, 1, 1, {}}));
  EXPECT_EQ(rows[3], (TraceRequest{3, 3435.678276, 804, 6, 1, 1, {}}));
  EXPECT_EQ(reader.first_timestamp_ns(), 1700158623979960000);
}

TEST(AzureCsvReader, Reads2024StyleTimestampsWithOffset) {
  const auto rows = read_azure(testing::fixture("azure2024_small.csv"));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].arrival_s, 0.0);
  EXPECT_EQ(rows[1].arrival_s, 0.996);
  EXPECT_EQ(rows[1].prompt_tokens, 1025);
  EXPECT_EQ(rows[1].output_tokens, 0);
}

const BadInput kBadAzure[] = {
    {"missing_generated", "TIMESTAMP,ContextTokens\n2023-11-16 18:17:03,1\n", 1,
     "header: expected a column 'GeneratedTokens', found the columns TIMESTAMP, ContextTokens"},
    {"lowercase_header", "timestamp,ContextTokens,GeneratedTokens\n", 1,
     "expected a column 'TIMESTAMP'"},
    {"date_only", "TIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-16,1,1\r\n", 2,
     "column 'TIMESTAMP': expected a timestamp 'YYYY-MM-DD hh:mm:ss[.fraction][Z|+hh:mm|-hh:mm]', "
     "found '2023-11-16'"},
    {"impossible_date", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-02-30 00:00:00,1,1\n", 2,
     "column 'TIMESTAMP': expected a valid calendar date (there is no 2023-02-30)"},
    {"backwards",
     "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.5,1,1\n"
     "2023-11-16 18:17:04.25,1,1\n2023-11-16 18:17:04.2499999,1,1\n",
     4, "column 'TIMESTAMP': expected a time no earlier than the previous row's, 0.75 s after the "
        "first row (rows must be in arrival order), found '2023-11-16 18:17:04.2499999'"},
    {"zero_context", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03,0,1\n", 2,
     "column 'ContextTokens': expected a positive integer, found '0'"},
    {"negative_generated", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03,1,-1\n",
     2, "column 'GeneratedTokens': expected a non-negative integer, found '-1'"},
    {"too_many_fields", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03,1,1,1\n", 2,
     "expected 3 fields as in the header, found 4"},
    {"empty", "", 0, "expected a header line, found an empty file"},
};

class AzureBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(AzureBadInput, NamesFileLineAndProblem) {
  testing::expect_bad_file("bad.csv", GetParam(), [](const std::string& p) { read_azure(p); });
}

INSTANTIATE_TEST_SUITE_P(Cases, AzureBadInput, ::testing::ValuesIn(kBadAzure),
                         testing::bad_input_name);

}  // namespace
}  // namespace pagesim::traces

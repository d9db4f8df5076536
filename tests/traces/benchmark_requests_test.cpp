#include "traces/benchmark_requests.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "test_util.h"

namespace pagesim::traces {
namespace {

using testing::ScratchDir;

BenchmarkRequests two_requests() {
  BenchmarkRequests b;
  b.path = "run.json";
  b.tool = "vllm bench serve";
  b.arrivals = "from start_times";
  b.total = 3;
  b.failed = 1;
  b.requests = {{4, 0.0, 100, 5, 0.25, 0.125, 0.75}, {2, 0.1, 7, 1, kNotMeasured, kNotMeasured, 0.5}};
  return b;
}

TEST(BenchmarkRequests, SortAndShiftOrdersByArrivalKeepingTiesAndStartsAtZero) {
  std::vector<MeasuredRequest> r = {{0, 5.5}, {1, 5.25}, {2, 5.5}, {3, 5.25}};
  sort_and_shift(r);
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].source_index, 1u);
  EXPECT_EQ(r[1].source_index, 3u);
  EXPECT_EQ(r[2].source_index, 0u);
  EXPECT_EQ(r[3].source_index, 2u);
  EXPECT_EQ(r[0].arrival_s, 0.0);
  EXPECT_EQ(r[3].arrival_s, 0.25);
}

// Issue 41: differences of clock readings carry float noise the files printed
// (3.8747999999999982); every time is kept to the nanosecond.
TEST(BenchmarkRequests, SortAndShiftRoundsTimesToTheNanosecond) {
  std::vector<MeasuredRequest> r = {{0, 996.3626, 1, 3, 0.1 + 0.2, (0.7 - 0.1) / 2, 1000.2374 - 996.3626},
                                    {1, 1000.2374, 1, 1, kNotMeasured, kNotMeasured, 0.5}};
  EXPECT_NE(fmt::format("{}", r[0].e2e_s), "3.8748");  // the noise this removes
  sort_and_shift(r);
  EXPECT_EQ(fmt::format("{}", r[1].arrival_s), "3.8748");
  EXPECT_EQ(fmt::format("{}", r[0].ttft_s), "0.3");
  EXPECT_EQ(fmt::format("{}", r[0].tpot_s), "0.3");
  EXPECT_EQ(fmt::format("{}", r[0].e2e_s), "3.8748");
  EXPECT_TRUE(std::isnan(r[1].ttft_s));
  EXPECT_EQ(to_nanoseconds(1.2345678904), 1.23456789);
  EXPECT_EQ(to_nanoseconds(1e7 + 0.1), 1e7 + 0.1);  // past 2^53 ns: as it is
}

TEST(BenchmarkRequests, ReplayNumbersTheRequestsInOrder) {
  auto source = replay_source(two_requests());
  const auto rows = testing::drain(*source);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (TraceRequest{0, 0.0, 100, 5, 1, 1, {}}));
  EXPECT_EQ(rows[1], (TraceRequest{1, 0.1, 7, 1, 1, 1, {}}));
  EXPECT_EQ(source->describe(),
            "vllm bench serve 'run.json': 2 of 3 requests (1 failed, 0 without output tokens excluded), arrivals "
            "from start_times");
}

TEST(BenchmarkRequests, MeasuredCsvHasRequestsCsvColumnsAndEmptyFieldsForWhatWasNotMeasured) {
  ScratchDir dir;
  const std::string path = dir.path("measured_requests.csv");
  write_measured_requests_csv(two_requests(), path);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(),
            "id,source_index,arrival_s,prompt_tokens,output_tokens,ttft_s,tpot_s,e2e_s\n"
            "0,4,0,100,5,0.25,0.125,0.75\n"
            "1,2,0.1,7,1,,,0.5\n");
  // Only the destination is left behind: the temporary file was renamed onto it.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path("")), std::filesystem::directory_iterator()),
            1);
}

TEST(BenchmarkRequests, MeasuredCsvIntoAMissingFolderNamesTheFile) {
  const auto e = testing::catch_trace_error(
      [] { write_measured_requests_csv(two_requests(), "/nonexistent/dir/measured_requests.csv"); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->file(), "/nonexistent/dir/measured_requests.csv");
  EXPECT_NE(std::string(e->what()).find("expected a writable temporary file"), std::string::npos) << e->what();
}

}  // namespace
}  // namespace pagesim::traces

#include "traces/benchmark_requests.h"

#include <gtest/gtest.h>

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

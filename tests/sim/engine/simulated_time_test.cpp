// The simulation refuses event times past what a double times to the microsecond (1e10 s),
// instead of reporting latencies rounded to 0 or turned to inf/NaN: an arrival that far out,
// and an iteration that would end that far out, are errors naming the request or replica.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "allocator/paged/paged_allocator.h"
#include "sim/core/simulation_error.h"
#include "sim_harness.h"

namespace pagesim::sim {
namespace {

using testing::no_watermark;
using testing::paged;
using testing::simulate;
using testing::trace_req;

std::string error_of(std::vector<traces::TraceRequest> trace, double seconds_per_iteration) {
  auto a = paged(100, 4);
  try {
    simulate(std::move(trace), a, no_watermark(SchedulerKind::kVllm), seconds_per_iteration);
  } catch (const SimulationError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no SimulationError";
  return "";
}

TEST(SimulatedTime, AnArrivalPastTheLimitIsAnError) {
  const std::string e = error_of({trace_req(0, 0, 8, 2), trace_req(1, 1e300, 8, 2)}, 1.0);
  EXPECT_NE(e.find("request 1 arrives at 1e+300 s"), std::string::npos) << e;
  EXPECT_NE(e.find("workload.trace.time_scale"), std::string::npos) << e;
}

TEST(SimulatedTime, AnIterationEndingPastTheLimitIsAnError) {
  const std::string e = error_of({trace_req(0, 0, 8, 2)}, 1.7e308);
  EXPECT_NE(e.find("an iteration of replica 0 starting at 0 s would end at 1.7e+308 s"), std::string::npos) << e;
  EXPECT_NE(e.find("cost"), std::string::npos) << e;
}

TEST(SimulatedTime, TimesUpToTheLimitRun) {
  auto a = paged(100, 4);
  const auto o = simulate({trace_req(0, 9e9, 8, 2)}, a, no_watermark(SchedulerKind::kVllm), 1.0);
  EXPECT_DOUBLE_EQ(o.value(0, "ttft_s"), 1.0);
  EXPECT_DOUBLE_EQ(o.value(0, "e2e_s"), 2.0);
}

}  // namespace
}  // namespace pagesim::sim

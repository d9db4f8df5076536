// Asynchronous scheduling (SchedulerSettings::async_steps): a request that arrives while an
// iteration is in flight joins async_steps iterations later than it would synchronously; one
// arriving at an idle engine is planned at once; nothing is ever left held.
#include <gtest/gtest.h>

#include <vector>

#include "allocator/paged/paged_allocator.h"
#include "sim/config/config_error.h"
#include "sim/config/experiment_config.h"
#include "sim_harness.h"

namespace pagesim::sim {
namespace {

using testing::paged;
using testing::simulate;
using testing::trace_req;

SchedulerSettings vllm(std::int64_t async_steps) {
  SchedulerSettings s = testing::no_watermark(SchedulerKind::kVllm);
  s.async_steps = async_steps;
  return s;
}

// Request 0 decodes from t = 0 in iterations of 1 s; request 1 arrives at 2.5 s, mid-step.
std::vector<traces::TraceRequest> trace() { return {trace_req(0, 0, 8, 10), trace_req(1, 2.5, 8, 3)}; }

TEST(AsyncScheduling, SynchronousPlansAnArrivalAtTheNextIterationStart) {
  auto a = paged(100, 4);
  const auto o = simulate(trace(), a, vllm(0), 1.0);
  EXPECT_DOUBLE_EQ(o.value(1, "first_scheduled_s"), 3.0);
  EXPECT_DOUBLE_EQ(o.value(1, "ttft_s"), 1.5);
}

TEST(AsyncScheduling, OneStepAheadJoinsAfterThePlannedStep) {
  auto a = paged(100, 4);
  const auto o = simulate(trace(), a, vllm(1), 1.0);
  EXPECT_DOUBLE_EQ(o.value(1, "first_scheduled_s"), 4.0);
  EXPECT_DOUBLE_EQ(o.value(1, "ttft_s"), 2.5);
  EXPECT_DOUBLE_EQ(o.value(0, "e2e_s"), 10.0);  // the running request is not delayed
}

TEST(AsyncScheduling, TwoStepsAheadJoinTwoLater) {
  auto a = paged(100, 4);
  const auto o = simulate(trace(), a, vllm(2), 1.0);
  EXPECT_DOUBLE_EQ(o.value(1, "first_scheduled_s"), 5.0);
}

TEST(AsyncScheduling, AnIdleEngineAndTheLastHeldRequestArePlannedAtOnce) {
  auto a = paged(100, 4);
  // Request 0 finishes at 2 s; request 1 arrives at 5 s to an idle engine; request 2 arrives
  // during request 1's last step, which would leave it held with nothing running after it.
  const auto o = simulate({trace_req(0, 0, 8, 2), trace_req(1, 5, 8, 1), trace_req(2, 5.5, 8, 1)}, a,
                          vllm(3), 1.0);
  EXPECT_DOUBLE_EQ(o.value(1, "first_scheduled_s"), 5.0);
  EXPECT_DOUBLE_EQ(o.value(2, "first_scheduled_s"), 6.0);
  EXPECT_DOUBLE_EQ(o.value(2, "e2e_s"), 1.5);
}

TEST(AsyncScheduling, TheConfigKeyIsCheckedAndWrittenOnlyWhenSet) {
  EXPECT_EQ(parse_experiment(YAML::Load("scheduler: {async_steps: 1}"), "e.yaml").scheduler.async_steps, 1);
  EXPECT_FALSE(to_yaml(parse_experiment(YAML::Load("name: x"), "e.yaml"))["scheduler"]["async_steps"]);
  try {
    parse_experiment(YAML::Load("scheduler:\n  async_steps: -1\n"), "e.yaml");
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("e.yaml:2: scheduler.async_steps: expected an integer in [0, 8]"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace pagesim::sim

// Review: time-weighted memory averaging.
#include <gtest/gtest.h>

#include "sim/metrics/metrics.h"

namespace pagesim::sim {
namespace {

IterationSample sample(std::int64_t index, double start, double duration, std::int64_t token_states) {
  IterationSample s;
  s.index = index;
  s.start_s = start;
  s.duration_s = duration;
  s.memory.token_states = token_states;
  s.memory.free = 100 - token_states;
  return s;
}

// Two 1 s iterations at t = 0 and t = 99 with 10% and 50% token states, the GPU idle in
// between: each sample stands for its own iteration, not for the idle gap after it (the
// memory of r0 is freed when its iteration ends), so the time-weighted mean is 30%.
TEST(Metrics, TimeWeightedMemoryDoesNotStretchASampleOverIdleTime) {
  Metrics m(MetricsSettings{}, nullptr, nullptr);
  m.on_iteration(sample(0, 0, 1, 10));
  m.on_iteration(sample(1, 99, 1, 50));
  Summary s = m.finish(100, 0);
  EXPECT_DOUBLE_EQ(s.memory_pct.token_states, 30);
  EXPECT_DOUBLE_EQ(s.memory_pct_time_weighted.token_states, 30);
}

// Back-to-back iterations of 1 s and 3 s: weights 1 and 3.
TEST(Metrics, TimeWeightedMemoryWeighsByDuration) {
  Metrics m(MetricsSettings{}, nullptr, nullptr);
  m.on_iteration(sample(0, 0, 1, 10));
  m.on_iteration(sample(1, 1, 3, 50));
  Summary s = m.finish(4, 0);
  EXPECT_DOUBLE_EQ(s.memory_pct_time_weighted.token_states, 40);
}

}  // namespace
}  // namespace pagesim::sim

// Review: time-weighted memory averaging.
#include <sstream>
#include <string>

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

namespace pagesim::sim {
namespace {

// A heterogeneous pool: 100 units, of which 20 then 40 hold out-of-window KV and 10 recurrent
// state. The layer classes appear only with the setting, as extra iterations.csv columns and a
// summary object; with them the partitioning classes sum to 100%.
TEST(Metrics, LayerClassesAreWrittenOnlyWhenAsked) {
  auto het = [](std::int64_t index, double start, std::int64_t oow) {
    IterationSample s = sample(index, start, 1, 30);
    s.memory.out_of_window = oow;
    s.memory.recurrent_state = 10;
    s.memory.free = 100 - 30 - 10 - oow;
    return s;
  };
  MetricsSettings settings;
  settings.layer_classes = true;
  std::ostringstream csv;
  Metrics m(settings, nullptr, &csv);
  m.on_iteration(het(0, 0, 20));
  m.on_iteration(het(1, 1, 40));
  const Summary s = m.finish(2, 0);
  ASSERT_TRUE(s.layer_classes.has_value());
  EXPECT_DOUBLE_EQ(s.layer_classes->memory_pct.out_of_window, 30);
  EXPECT_DOUBLE_EQ(s.layer_classes->memory_pct.recurrent_state, 10);
  EXPECT_DOUBLE_EQ(s.layer_classes->memory_pct_time_weighted.out_of_window, 30);
  EXPECT_DOUBLE_EQ(capacity_pct(s.memory_pct) + s.layer_classes->memory_pct.out_of_window +
                       s.layer_classes->memory_pct.recurrent_state + s.layer_classes->memory_pct.unused_layers,
                   100);
  const std::string text = csv.str();
  const std::string header = text.substr(0, text.find('\n'));
  EXPECT_EQ(header, Metrics::iterations_csv_header() + ",out_of_window,recurrent_state,unused_layers");
  EXPECT_NE(text.find(",20,10,0\n"), std::string::npos) << text;
  EXPECT_NE(text.find(",40,10,0\n"), std::string::npos) << text;

  Metrics plain(MetricsSettings{}, nullptr, nullptr);
  plain.on_iteration(het(0, 0, 20));
  EXPECT_FALSE(plain.finish(1, 0).layer_classes.has_value());
}

}  // namespace
}  // namespace pagesim::sim

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

// A cluster of two replicas (iterations_of_replicas): its iteration figures are the
// replicas' sums added, each replica's samples weighted by its own iterations' durations, and they do
// not depend on how the replicas' iterations reached it. Replica 0: 1 s at 10%, then 3 s at
// 50%; replica 1: 2 s at 20%, overlapping both. Per iteration (10 + 50 + 20) / 3; over time
// (10 + 150 + 40) / 6.
TEST(Metrics, ClusterMemoryIsTheReplicasSumsWhateverTheInterleaving) {
  const IterationSample r0[] = {sample(0, 0, 1, 10), sample(1, 1, 3, 50)};
  const IterationSample r1[] = {sample(0, 0.5, 2, 20)};
  MetricsSettings cs;
  cs.iterations_of_replicas = true;
  auto run = [&](bool r1_first) {
    Metrics cluster(cs, nullptr, nullptr), m0(MetricsSettings{}, nullptr, nullptr), m1(MetricsSettings{}, nullptr, nullptr);
    EXPECT_FALSE(cluster.reads_replica_order());
    EXPECT_FALSE(cluster.reads_iterations());
    auto feed = [&](std::int32_t replica, const IterationSample& s) {
      cluster.on_replica_iteration(replica, s, IterationPlan{});
      (replica == 0 ? m0 : m1).on_iteration(s);
    };
    if (r1_first) feed(1, r1[0]);
    feed(0, r0[0]);
    feed(0, r0[1]);
    if (!r1_first) feed(1, r1[0]);
    m0.finish(4, 0);
    m1.finish(4, 0);
    IterationSums sums = m0.sums();
    sums += m1.sums();
    EXPECT_EQ(sums.window_iterations, 3);
    EXPECT_DOUBLE_EQ(sums.seconds, 6);
    return cluster.finish(4, 0, &sums);
  };
  const Summary a = run(false), b = run(true);
  EXPECT_DOUBLE_EQ(a.memory_pct.token_states, 80.0 / 3);
  EXPECT_DOUBLE_EQ(a.memory_pct_time_weighted.token_states, 200.0 / 6);
  EXPECT_DOUBLE_EQ(a.memory_pct_time_weighted.free, 100 - 200.0 / 6);
  EXPECT_EQ(a.memory_pct.token_states, b.memory_pct.token_states);
  EXPECT_EQ(a.memory_pct_time_weighted.token_states, b.memory_pct_time_weighted.token_states);
  EXPECT_EQ(a.iterations, 3);
  EXPECT_EQ(a.window_iterations, 3);
  // Rows of interleaved replicas do depend on the order.
  std::ostringstream rows;
  Metrics writer(cs, nullptr, &rows);
  EXPECT_TRUE(writer.reads_replica_order());
  EXPECT_TRUE(writer.reads_iterations());
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

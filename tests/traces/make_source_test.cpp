#include "traces/make_source.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string_view>

#include "test_util.h"
#include "traces/trace_stats.h"
#include "traces/vector_source.h"

namespace pagesim::traces {
namespace {

using testing::drain;

// The vLLM paper's Figure 2 workload, shortened.
WorkloadSpec fig2(double duration_s, std::uint64_t seed) {
  WorkloadSpec spec;
  spec.kind = WorkloadKind::kSynthetic;
  spec.arrival = {.kind = ArrivalKind::kPoissonQuantum, .rate = 4.0, .quantum_s = 0.01};
  spec.lengths.kind = LengthsKind::kCycleShuffle;
  spec.lengths.path = testing::bundled("sharegpt_opt_lengths.csv");
  spec.max_total_tokens = 2048;
  spec.duration_s = duration_s;
  spec.seed = seed;
  return spec;
}

TEST(MakeSource, Figure2Workload) {
  auto source = make_source(fig2(900.0, 0));
  const auto rows = drain(*source);
  EXPECT_NEAR(static_cast<double>(rows.size()), 3600.0, 5 * 60.0);
  for (const auto& r : rows) {
    ASSERT_LT(r.total_tokens(), 2048);
    ASSERT_LT(r.arrival_s, 900.0);
    ASSERT_EQ(r.arrival_s, std::round(r.arrival_s / 0.01) * 0.01);
    ASSERT_EQ(r.n, 1);
  }
  // The shuffled rows keep the filtered table's means (161.18 / 338.0) within sampling error.
  VectorSource again(rows);
  const TraceStats s = compute_stats(again);
  EXPECT_NEAR(s.prompt.mean, 161.18, 15.0);
  EXPECT_NEAR(s.output.mean, 338.0, 20.0);
}

TEST(MakeSource, SameSeedIdenticalStreamDifferentSeedDifferentStream) {
  std::vector<WorkloadSpec> specs;
  specs.push_back(fig2(120.0, 0));
  WorkloadSpec dists;
  dists.arrival = {.kind = ArrivalKind::kGamma, .rate = 10.0, .cv = 2.0};
  dists.lengths.prompt = {.kind = LengthKind::kLognormal, .lo = 1, .hi = 8192, .median = 500,
                          .sigma = 1.0};
  dists.lengths.output = {.kind = LengthKind::kUniform, .lo = 1, .hi = 1000};
  dists.sampling = {{1.0, 1, 1}, {1.0, 2, 1}};
  dists.max_requests = 3000;
  specs.push_back(dists);
  WorkloadSpec empirical = dists;
  empirical.lengths.kind = LengthsKind::kEmpirical;
  empirical.lengths.path = testing::bundled("lengths_sharegpt_8k_filtered_stats_llama2_tokenizer.csv");
  specs.push_back(empirical);
  WorkloadSpec burst = dists;
  burst.arrival = {.kind = ArrivalKind::kBurst, .rate = 50.0, .on_s = 2.0, .off_s = 5.0};
  specs.push_back(burst);
  for (auto spec : specs) {
    spec.seed = 11;
    auto a = make_source(spec);
    auto b = make_source(spec);
    const auto first = drain(*a);
    EXPECT_FALSE(first.empty());
    EXPECT_EQ(first, drain(*b));
    spec.seed = 12;
    auto c = make_source(spec);
    EXPECT_NE(first, drain(*c));
  }
}

TEST(MakeSource, ChangingLengthsKeepsArrivalTimes) {
  WorkloadSpec a;
  a.arrival = {.kind = ArrivalKind::kPoisson, .rate = 5.0};
  a.lengths.prompt = {.kind = LengthKind::kFixed, .value = 10};
  a.max_requests = 500;
  WorkloadSpec b = a;
  b.lengths.prompt = {.kind = LengthKind::kUniform, .lo = 1, .hi = 100};
  auto sa = make_source(a);
  auto sb = make_source(b);
  const auto ra = drain(*sa);
  const auto rb = drain(*sb);
  ASSERT_EQ(ra.size(), rb.size());
  for (std::size_t i = 0; i < ra.size(); ++i) EXPECT_EQ(ra[i].arrival_s, rb[i].arrival_s);
}

TEST(MakeSource, SyntheticFilterDoesNotThinArrivals) {
  WorkloadSpec spec;
  spec.arrival = {.kind = ArrivalKind::kConstant, .rate = 10.0};
  spec.lengths.prompt = {.kind = LengthKind::kUniform, .lo = 1, .hi = 3000};
  spec.lengths.output = {.kind = LengthKind::kUniform, .lo = 0, .hi = 3000};
  spec.max_total_tokens = 2048;
  spec.duration_s = 100.0;
  auto source = make_source(spec);
  const auto rows = drain(*source);
  ASSERT_EQ(rows.size(), 1000u);  // every 0.1 s for 100 s
  for (const auto& r : rows) EXPECT_LT(r.total_tokens(), 2048);
}

TEST(MakeSource, FileOrderEndsWithTheFile) {
  WorkloadSpec spec;
  spec.arrival = {.kind = ArrivalKind::kConstant, .rate = 1.0};
  spec.lengths.kind = LengthsKind::kFileOrder;
  spec.lengths.path = testing::fixture("lengths_small.csv");
  spec.max_total_tokens = 2048;
  auto source = make_source(spec);
  const auto rows = drain(*source);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[2], (TraceRequest{2, 2.0, 1, 0, 1, 1, {}}));
}

TEST(MakeSource, TraceReplayWithScaleFilterSamplingAndLimit) {
  WorkloadSpec spec;
  spec.kind = WorkloadKind::kTrace;
  spec.trace.path = testing::fixture("azure_small.csv");
  spec.trace.time_scale = 0.5;
  spec.max_total_tokens = 4000;  // drops the 4808 + 10 row
  spec.sampling = {{1.0, 3, 1}};
  spec.duration_s = 1000.0;      // drops the row at 3435.678276 * 0.5 s
  auto source = make_source(spec);
  const auto rows = drain(*source);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (TraceRequest{1, 0.026, 3180, 8, 3, 1, {}}));
  EXPECT_EQ(rows[1], (TraceRequest{2, 0.026, 10, 0, 3, 1, {}}));
  EXPECT_NE(source->describe().find("azure csv"), std::string::npos);
}

TEST(MakeSource, TraceReplayKeepsHashBlockSize) {
  WorkloadSpec spec;
  spec.kind = WorkloadKind::kTrace;
  spec.trace.path = testing::fixture("mooncake_small.jsonl");
  spec.max_requests = 2;
  auto source = make_source(spec);
  EXPECT_EQ(source->hash_block_tokens(), 512);
  EXPECT_EQ(drain(*source).size(), 2u);
}

void expect_spec_error(const WorkloadSpec& spec, const std::string& message) {
  try {
    make_source(spec);
    ADD_FAILURE() << "no SpecError for " << message;
  } catch (const SpecError& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
}

TEST(MakeSource, InvalidSpecsAreSpecErrors) {
  WorkloadSpec endless;
  expect_spec_error(endless,
                    "duration_s: expected a positive duration or max_requests > 0 (a synthetic "
                    "workload does not end by itself), found neither");
  WorkloadSpec s;
  s.max_requests = 10;
  s.max_total_tokens = 1;
  expect_spec_error(s, "max_total_tokens: expected 0 (no limit) or a limit >= 2 tokens (every "
                       "request has prompt >= 1), found 1");
  s.max_total_tokens = 0;
  s.duration_s = -1;
  expect_spec_error(s, "duration_s: expected a number of seconds >= 0 (0 = no limit), found -1");
  s.duration_s = 0;
  s.arrival.rate = 0;
  expect_spec_error(s, "arrival.rate: expected a positive number of requests/s, found 0");
  s.arrival.rate = 1;
  s.lengths.output = {.kind = LengthKind::kFixed, .value = -1};
  expect_spec_error(s, "lengths.output.value: expected a length in [0, 4294967296] tokens, found -1");
  s.lengths.output = {};
  s.lengths.kind = LengthsKind::kEmpirical;
  expect_spec_error(s, "lengths.path: expected the path of a lengths file, found ''");
  s.lengths.kind = LengthsKind::kDistributions;
  s.sampling = {{1.0, 0, 1}};
  expect_spec_error(s, "sampling[0].n: expected a positive number of samples, found 0");

  WorkloadSpec t;
  t.kind = WorkloadKind::kTrace;
  expect_spec_error(t, "trace.path: expected the path of a trace file, found ''");
  t.trace.path = testing::fixture("lengths_small.csv");
  t.trace.format = TraceFormat::kLengths;
  expect_spec_error(t, "trace.format: expected a format with arrival times (for a lengths file "
                       "use a synthetic workload with lengths.kind file_order, empirical or "
                       "cycle_shuffle), found lengths");
  t.trace.format = TraceFormat::kAuto;
  t.trace.time_scale = 0;
  expect_spec_error(t, "trace.time_scale: expected a positive factor, found 0");
}

// Poisson 1e9 req/s for 1 s would queue a billion requests (gigabytes, then bad_alloc):
// refused up front, naming the rate, the duration and the limit.
TEST(MakeSource, GeneratedRequestCountIsBounded) {
  WorkloadSpec s;
  s.arrival = {.kind = ArrivalKind::kPoisson, .rate = 1e9};
  s.duration_s = 1;
  expect_spec_error(s, "arrival.rate: expected at most 10000000 requests (kMaxGeneratedRequests: a synthetic "
                       "workload far beyond what the GPU serves queues them all in memory): lower "
                       "workload.arrival.rate or workload.duration_s, or set workload.max_requests, found "
                       "1e+09 req/s for workload.duration_s 1 s = 1e+09 requests");
  s.max_requests = 1000;  // bounded by max_requests: accepted
  EXPECT_NO_THROW(validate(s));
  s.max_requests = 10'000'001;
  s.duration_s = 0;
  expect_spec_error(s, "max_requests: expected at most 10000000 requests (kMaxGeneratedRequests: a synthetic "
                       "workload far beyond what the GPU serves queues them all in memory), found 10000001");
  s.max_requests = 10'000'000;  // the limit itself
  EXPECT_NO_THROW(validate(s));
  s.kind = WorkloadKind::kSessions;
  s.max_requests = 0;
  s.duration_s = 1;
  expect_spec_error(s, "arrival.rate: expected at most 10000000 requests (kMaxGeneratedRequests: a synthetic "
                       "workload far beyond what the GPU serves queues them all in memory): lower "
                       "workload.arrival.rate or workload.duration_s, or set workload.max_requests, found "
                       "1e+09 req/s for workload.duration_s 1 s = 1e+09 requests");
}

TEST(MakeSource, FileProblemsAreTraceErrors) {
  WorkloadSpec t;
  t.kind = WorkloadKind::kTrace;
  t.trace.path = testing::fixture("lengths_small.csv");  // detected as lengths-only
  EXPECT_THROW(make_source(t), TraceError);
  t.trace.path = testing::fixture("no_such_file.csv");
  EXPECT_THROW(make_source(t), TraceError);
  WorkloadSpec s;
  s.max_requests = 5;
  s.lengths.kind = LengthsKind::kCycleShuffle;
  s.lengths.path = testing::fixture("mooncake_small.jsonl");  // not a CSV file
  EXPECT_THROW(make_source(s), TraceError);
}

// Each value of the three workload enums once under its own name (as TraceFormat.Names).
// An unknown name in a config is the config's error (tests/sim/config/experiment_config_test.cpp).
TEST(WorkloadSpec, KindNames) {
  std::set<std::string_view> names;
  for (const auto& [kind, name] : kWorkloadKindNames) {
    EXPECT_EQ(to_string(kind), name);
    names.insert(name);
  }
  EXPECT_EQ(names.size(), kWorkloadKindNames.size());
  names.clear();
  for (const auto& [kind, name] : kLengthsKindNames) {
    EXPECT_EQ(to_string(kind), name);
    names.insert(name);
  }
  EXPECT_EQ(names.size(), kLengthsKindNames.size());
  names.clear();
  for (const auto& [rng, name] : kWorkloadRngNames) {
    EXPECT_EQ(to_string(rng), name);
    names.insert(name);
  }
  EXPECT_EQ(names.size(), kWorkloadRngNames.size());
  EXPECT_EQ(to_string(LengthsKind::kCycleShuffle), "cycle_shuffle");
  EXPECT_EQ(to_string(WorkloadRng::kArtifact), "artifact");
  EXPECT_EQ(to_string(static_cast<LengthsKind>(99)), "?");
}

}  // namespace
}  // namespace pagesim::traces

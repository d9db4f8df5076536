// The artifact's generators against golden values printed by NumPy 1.24.2 and CPython 3.11.2
// (tests/traces/artifact_random_golden.py), and the exact Fig. 2 workload they replay.
#include "traces/artifact_random.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "test_util.h"
#include "traces/make_source.h"
#include "traces/trace_error.h"

namespace pagesim::traces {
namespace {

TEST(Mt19937, InitGenrandMatchesTheStandardEngine) {
  Mt19937 mine(5489U);
  std::mt19937 standard(5489U);
  for (int i = 0; i < 2000; ++i) ASSERT_EQ(mine.next_u32(), standard()) << "output " << i;
}

TEST(NumpyLegacyRandom, RandomSampleIsBitExact) {
  NumpyLegacyRandom rng(0);
  EXPECT_EQ(rng.random(), 0x1.18fe1565f12a8p-1);
  EXPECT_EQ(rng.random(), 0x1.6e2d4cf608733p-1);
  EXPECT_EQ(rng.random(), 0x1.349d66b6e894bp-1);
}

struct PoissonGolden {
  std::uint32_t seed;
  std::int64_t total;
  std::vector<std::size_t> first_nonzero;
  std::int64_t max;
};

TEST(NumpyLegacyRandom, PoissonCountsOfTheFig2TraceMatchNumpy) {
  // np.random.seed(s); np.random.poisson(lam=4.0 * (10 / 1000), size=90000)
  const std::vector<PoissonGolden> golden = {
      {0, 3604, {8, 19, 50, 67, 68, 98, 143, 157}, 2},
      {1, 3555, {21, 39, 85, 106, 127, 146, 152, 164}, 3},
      {4, 3675, {0, 1, 4, 10, 100, 118, 143, 159}, 2},
  };
  for (const PoissonGolden& g : golden) {
    NumpyLegacyRandom rng(g.seed);
    std::int64_t total = 0;
    std::int64_t max = 0;
    std::vector<std::size_t> nonzero;
    for (std::size_t i = 0; i < 90000; ++i) {
      const std::int64_t n = rng.poisson(4.0 * (10.0 / 1000.0));
      total += n;
      max = std::max(max, n);
      if (n > 0 && nonzero.size() < 8) nonzero.push_back(i);
    }
    EXPECT_EQ(total, g.total) << "seed " << g.seed;
    EXPECT_EQ(nonzero, g.first_nonzero) << "seed " << g.seed;
    EXPECT_EQ(max, g.max) << "seed " << g.seed;
  }
}

TEST(NumpyLegacyRandom, PoissonWithALargerMean) {
  NumpyLegacyRandom rng(7);  // np.random.seed(7); np.random.poisson(3.5, size=10)
  std::vector<std::int64_t> got;
  for (int i = 0; i < 10; ++i) got.push_back(rng.poisson(3.5));
  EXPECT_EQ(got, (std::vector<std::int64_t>{2, 4, 4, 1, 4, 5, 4, 4, 4, 4}));
}

TEST(CpythonRandom, GetrandbitsMatchesCpythonForSmallAndLargeSeeds) {
  struct Golden {
    std::uint64_t seed;
    std::vector<std::uint32_t> words;
  };
  const std::vector<Golden> golden = {
      {0, {3626764237U, 1654615998U, 3255389356U}},
      {1, {577090037U, 2444712010U, 3639700191U}},
      {(std::uint64_t{1} << 40) + 5, {2166296868U, 2220160828U, 1153647273U}},
  };
  for (const Golden& g : golden) {
    CpythonRandom rng(g.seed);
    for (std::uint32_t w : g.words) EXPECT_EQ(rng.getrandbits(32), w) << "seed " << g.seed;
  }
}

TEST(CpythonRandom, ShuffleMatchesCpython) {
  struct Golden {
    std::uint64_t seed;
    std::vector<int> head;
    std::int64_t weighted_sum;  // sum of i * rows[i]
  };
  const std::vector<Golden> golden = {
      {0, {439, 621, 160, 549, 237, 389, 658, 507, 124, 290}, 251292570},
      {1, {852, 836, 280, 575, 208, 609, 932, 725, 47, 985}, 249757595},
      {(std::uint64_t{1} << 40) + 5, {207, 690, 542, 290, 700, 351, 177, 707, 551, 415}, 246011851},
  };
  for (const Golden& g : golden) {
    std::vector<int> rows(1000);
    std::iota(rows.begin(), rows.end(), 0);
    CpythonRandom(g.seed).shuffle(rows);
    EXPECT_EQ(std::vector<int>(rows.begin(), rows.begin() + 10), g.head) << "seed " << g.seed;
    std::int64_t sum = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) sum += static_cast<std::int64_t>(i) * rows[i];
    EXPECT_EQ(sum, g.weighted_sum) << "seed " << g.seed;
  }
}

WorkloadSpec fig2_workload() {
  WorkloadSpec w;
  w.kind = WorkloadKind::kSynthetic;
  w.arrival = {ArrivalKind::kPoissonQuantum, 4.0, 0.01};
  w.lengths.kind = LengthsKind::kCycleShuffle;
  w.lengths.path = testing::bundled("sharegpt_opt_lengths.csv");
  w.max_total_tokens = 2048;
  w.duration_s = 900;
  w.seed = 0;
  w.rng = WorkloadRng::kArtifact;
  return w;
}

TEST(ArtifactWorkload, Fig2IsTheArtifactsSeed0Trace) {
  // trace.py's generate_text_completion_requests(rate 4, 900 s, seed 0) on the same file.
  auto source = make_source(fig2_workload());
  std::vector<TraceRequest> head;
  std::uint64_t requests = 0;
  std::int64_t prompt = 0;
  std::int64_t output = 0;
  while (auto r = source->next()) {
    if (head.size() < 4) head.push_back(*r);
    ++requests;
    prompt += r->prompt_tokens;
    output += r->output_tokens;
  }
  EXPECT_EQ(requests, 3604u);
  EXPECT_EQ(prompt, 547150);
  EXPECT_EQ(output, 1200908);
  ASSERT_EQ(head.size(), 4u);
  const double times[] = {0.08, 0.19, 0.5, 0.67};
  const std::int64_t prompts[] = {48, 147, 25, 32};
  const std::int64_t outputs[] = {602, 74, 20, 67};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_DOUBLE_EQ(head[i].arrival_s, times[i]) << "request " << i;
    EXPECT_EQ(head[i].prompt_tokens, prompts[i]) << "request " << i;
    EXPECT_EQ(head[i].output_tokens, outputs[i]) << "request " << i;
  }
}

void expect_spec_error(const WorkloadSpec& w, const std::string& field) {
  try {
    make_source(w);
    ADD_FAILURE() << "no SpecError for field " << field;
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), field) << e.what();
  }
}

TEST(ArtifactWorkload, RefusesWhatTheArtifactNeverDid) {
  WorkloadSpec w = fig2_workload();
  w.arrival.kind = ArrivalKind::kPoisson;
  expect_spec_error(w, "arrival.kind");

  w = fig2_workload();
  w.lengths.kind = LengthsKind::kEmpirical;
  expect_spec_error(w, "lengths.kind");

  w = fig2_workload();
  w.seed = std::uint64_t{1} << 32;
  expect_spec_error(w, "seed");

  w = fig2_workload();
  w.arrival.rate = 1000.0;  // 10 requests per quantum: NumPy switches to PTRS
  expect_spec_error(w, "arrival.rate");

  w = fig2_workload();
  w.kind = WorkloadKind::kTrace;
  w.trace.path = testing::bundled("azure2023_conv.csv");
  expect_spec_error(w, "rng");
}

TEST(ArtifactWorkload, PagesimStreamsAreUnchanged) {
  // The default generators still give pagesim's own (different) seed-0 trace.
  WorkloadSpec w = fig2_workload();
  w.rng = WorkloadRng::kPagesim;
  auto source = make_source(w);
  std::uint64_t requests = 0;
  while (source->next()) ++requests;
  EXPECT_NE(requests, 3604u);
}

}  // namespace
}  // namespace pagesim::traces

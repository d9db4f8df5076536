// MaxTotalFilter, LimitSource, TimeScaleSource, SamplingMixSource and VectorSource.
#include <gtest/gtest.h>

#include <map>

#include "test_util.h"
#include "traces/max_total_filter.h"
#include "traces/request_limit.h"
#include "traces/sampling_mix.h"
#include "traces/time_scale_source.h"
#include "traces/vector_source.h"

namespace pagesim::traces {
namespace {

using testing::drain;

std::unique_ptr<RequestSource> five() {
  return std::make_unique<VectorSource>(
      std::vector<TraceRequest>{{0, 0.0, 1000, 1047},
                                {1, 1.0, 1000, 1048},
                                {2, 2.0, 2047, 0},
                                {3, 3.0, 1, 1, 1, 1, {4, 5}},
                                {4, 4.0, 3000, 1}},
      512);
}

TEST(MaxTotalFilter, KeepsPromptPlusOutputStrictlyBelowTheLimit) {
  MaxTotalFilter f(five(), 2048);
  const auto rows = drain(f);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].id, 0u);
  EXPECT_EQ(rows[1].id, 2u);
  EXPECT_EQ(rows[2].id, 3u);
  EXPECT_EQ(rows[2].hash_ids, (std::vector<std::uint64_t>{4, 5}));
  EXPECT_EQ(f.dropped(), 2u);
  EXPECT_EQ(f.hash_block_tokens(), 512);
  EXPECT_EQ(f.describe(), "5 requests in memory; keeping prompt + output < 2048");
}

TEST(LimitSource, StopsAtDurationOrCount) {
  LimitSource by_time(five(), 2.0, 0);
  EXPECT_EQ(drain(by_time).size(), 2u);  // arrivals 0 and 1, not 2
  LimitSource by_count(five(), 0.0, 3);
  EXPECT_EQ(drain(by_count).size(), 3u);
  LimitSource both(five(), 10.0, 4);
  EXPECT_EQ(drain(both).size(), 4u);
  LimitSource none(five(), 0.0, 0);
  EXPECT_EQ(drain(none).size(), 5u);
  EXPECT_EQ(both.describe(), "5 requests in memory; arrivals before 10 s; at most 4 requests");
}

// An endless source that counts how often it is pulled.
class Counting final : public RequestSource {
 public:
  std::optional<TraceRequest> next() override {
    ++pulls;
    return TraceRequest{pulls, static_cast<double>(pulls), 1, 1};
  }
  std::string describe() const override { return "counting"; }
  std::uint64_t pulls = 0;
};

TEST(LimitSource, StopsPullingAnEndlessSource) {
  auto counting = std::make_unique<Counting>();
  Counting* raw = counting.get();
  LimitSource limit(std::move(counting), 10.0, 0);
  EXPECT_EQ(drain(limit).size(), 9u);  // arrivals 1 .. 9
  EXPECT_FALSE(limit.next());
  EXPECT_EQ(raw->pulls, 10u);  // the refused one, then never again
}

TEST(TimeScaleSource, ScalesArrivalTimes) {
  TimeScaleSource half(five(), 0.5);
  const auto rows = drain(half);
  ASSERT_EQ(rows.size(), 5u);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].arrival_s, 0.5 * static_cast<double>(i));
  }
}

TEST(SamplingMixSource, SingleChoiceAppliesToEveryRequest) {
  SamplingMixSource s(five(), {{1.0, 4, 1}}, 3);
  for (const auto& r : drain(s)) {
    EXPECT_EQ(r.n, 4);
    EXPECT_EQ(r.beam_width, 1);
  }
}

TEST(SamplingMixSource, MixFollowsTheWeights) {
  auto endless = std::make_unique<Counting>();
  LimitSource limited(std::make_unique<SamplingMixSource>(
                          std::move(endless),
                          std::vector<SamplingChoice>{{3.0, 1, 1}, {1.0, 1, 4}, {0.0, 9, 1}, {0.0, 1, 9}}, 5),
                      0.0, 40'000);
  std::map<int, int> beams;
  for (const auto& r : drain(limited)) {
    EXPECT_EQ(r.n, 1);
    ++beams[r.beam_width];
  }
  EXPECT_EQ(beams.count(9), 0u);
  EXPECT_NEAR(beams[1], 30'000, 500);
  EXPECT_NEAR(beams[4], 10'000, 500);
}

TEST(SamplingMixSource, InvalidMixIsASpecError) {
  auto bad = [](std::vector<SamplingChoice> mix, const std::string& message) {
    try {
      validate(mix, "sampling");
      ADD_FAILURE() << message;
    } catch (const SpecError& e) {
      EXPECT_EQ(std::string(e.what()), message);
    }
  };
  bad({}, "sampling: expected at least one choice, found none");
  bad({{1.0, 0, 1}}, "sampling[0].n: expected a positive number of samples, found 0");
  bad({{1.0, 1, 1}, {1.0, 1, -2}}, "sampling[1].beam_width: expected a positive beam width, found -2");
  bad({{1.0, 1, 4}, {1.0, 2, 4}},
      "sampling[1].beam_width: expected 1 when n > 1 (a request is either parallel sampling (n) or beam search "
      "(beam_width)), found 4 with n = 2");
  bad({{-1.0, 1, 1}}, "sampling[0].weight: expected a finite weight >= 0, found -1");
  bad({{0.0, 1, 1}}, "sampling: expected weights with a positive sum, found all 0");
}

TEST(VectorSource, ValidatesItsRequests) {
  EXPECT_THROW(VectorSource({{0, 1.0, 1, 1}, {1, 0.5, 1, 1}}), SpecError);
  EXPECT_THROW(VectorSource({{0, 1.0, 0, 1}}), SpecError);
  EXPECT_THROW(VectorSource({{0, 1.0, 1, -1}}), SpecError);
  EXPECT_THROW(VectorSource({{0, -1.0, 1, 1}}), SpecError);
  EXPECT_THROW(VectorSource({{0, 1.0, 1, 1, 0, 1, {}}}), SpecError);
  try {
    VectorSource({{0, 1.0, 1, 1}, {1, 0.5, 1, 1}});
  } catch (const SpecError& e) {
    EXPECT_EQ(std::string(e.what()), "requests[1].arrival_s: expected a finite time >= 1 s, found 0.5");
  }
  // n or beam_width above 1 each reads; both in one request is parallel sampling and beam
  // search at once, which no engine runs.
  EXPECT_NO_THROW(VectorSource({{0, 1.0, 1, 1, 4, 1, {}}, {1, 1.0, 1, 1, 1, 4, {}}}));
  try {
    VectorSource({{0, 1.0, 1, 1, 1, 4, {}}, {1, 1.0, 1, 1, 3, 2, {}}});
    ADD_FAILURE() << "no error";
  } catch (const SpecError& e) {
    EXPECT_EQ(std::string(e.what()),
              "requests[1].beam_width: expected 1 when n > 1 (a request is either parallel sampling (n) or beam "
              "search (beam_width)), found 2 with n = 3");
  }
}

}  // namespace
}  // namespace pagesim::traces

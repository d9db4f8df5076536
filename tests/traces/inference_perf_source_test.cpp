// InferencePerfSource and the inference_perf workload: int(rate * duration) requests per stage
// with consecutive ids, constant stages normalised to exactly their duration, the gap between
// stages, poisson stages, the data index restarting each stage, hash ids shared by a group's
// system prompt and identical for a resent prompt, inference-perf's length distributions,
// determinism under a seed, and the errors of bad settings.
#include "traces/inference_perf_source.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "test_util.h"
#include "traces/make_source.h"
#include "traces/trace_error.h"
#include "traces/workload_spec.h"

namespace pagesim::traces {
namespace {

using testing::drain;

InferencePerfSpec codegen_like() {
  InferencePerfSpec s;
  s.shared_prefix.num_groups = 3;
  s.shared_prefix.num_prompts_per_group = 4;
  s.shared_prefix.system_prompt_len = 100;
  s.shared_prefix.question_len = 46;
  s.shared_prefix.output_len = 7;
  s.stages = {{.rate = 2.5, .duration_s = 3.0}, {.rate = 4.0, .duration_s = 10.0}};
  s.stage_gap_s = 5.0;
  return s;
}

std::vector<TraceRequest> all_of(const InferencePerfSpec& s, std::uint64_t seed = 1) {
  InferencePerfSource source(s, seed);
  return drain(source);
}

TEST(InferencePerfSource, CountsAreIntOfRateTimesDurationWithConsecutiveIds) {
  InferencePerfSpec s = codegen_like();
  s.stages = {{2.5, 3.0}, {1.1, 1.0}, {0.29, 10.0}, {4.0, 10.0}};  // 7.5, 1.1, 2.9000000000000004, 40
  const auto plan = inference_perf_stages(s);
  ASSERT_EQ(plan.size(), 4u);
  EXPECT_EQ(plan[0].count, 7u);
  EXPECT_EQ(plan[1].count, 1u);
  EXPECT_EQ(plan[2].count, 2u);
  EXPECT_EQ(plan[3].count, 40u);
  EXPECT_EQ(plan[0].first_id, 0u);
  EXPECT_EQ(plan[1].first_id, 7u);
  EXPECT_EQ(plan[2].first_id, 8u);
  EXPECT_EQ(plan[3].first_id, 10u);
  const auto requests = all_of(s);
  ASSERT_EQ(requests.size(), 50u);
  for (std::size_t i = 0; i < requests.size(); ++i) EXPECT_EQ(requests[i].id, i);
}

TEST(InferencePerfSource, ConstantStagesSpanExactlyTheirDurationAfterTheGap) {
  const InferencePerfSpec s = codegen_like();
  const auto r = all_of(s);
  ASSERT_EQ(r.size(), 7u + 40u);
  // Stage 0: origin 0, sends in (0, 3], the last exactly at 3 (load_timer.py:57-65).
  for (std::size_t i = 0; i < 7; ++i) {
    EXPECT_GT(r[i].arrival_s, 0.0);
    EXPECT_LE(r[i].arrival_s, 3.0);
    if (i > 0) {
      EXPECT_GE(r[i].arrival_s, r[i - 1].arrival_s);
    }
  }
  EXPECT_EQ(r[6].arrival_s, 3.0);
  // Stage 1: origin = stage 0's last send + stage_gap_s.
  const double origin = 3.0 + 5.0;
  for (std::size_t i = 7; i < r.size(); ++i) {
    EXPECT_GT(r[i].arrival_s, origin);
    EXPECT_LE(r[i].arrival_s, origin + 10.0);
    EXPECT_GE(r[i].arrival_s, r[i - 1].arrival_s);
  }
  EXPECT_EQ(r.back().arrival_s, origin + 10.0);
}

TEST(InferencePerfSource, PoissonStagesTakeTheirCountFromPerSecondBatches) {
  InferencePerfSpec s = codegen_like();
  s.load_type = InferencePerfLoad::kPoisson;
  s.stages = {{20.0, 5.0}, {3.0, 4.0}};
  const auto r = all_of(s);
  ASSERT_EQ(r.size(), 100u + 12u);
  for (std::size_t i = 1; i < r.size(); ++i) EXPECT_GE(r[i].arrival_s, r[i - 1].arrival_s);
  EXPECT_GT(r[0].arrival_s, 0.0);
  // A second's batch ends exactly at its second's end (ConstantLoadTimer(c, 1.0)); stage 1
  // starts stage_gap_s after stage 0's last send.
  EXPECT_GT(r[100].arrival_s, r[99].arrival_s + 5.0);
}

TEST(InferencePerfSource, EachStageRestartsTheDataIndexOverTheShuffledPool) {
  const InferencePerfSpec s = codegen_like();  // pool of 12; stage 0 sends 7, stage 1 40
  InferencePerfSource source(s, 3);
  const auto pool = source.pool();
  const auto r = drain(source);
  ASSERT_EQ(pool.size(), 12u);
  for (std::size_t i = 0; i < 7; ++i) {
    EXPECT_EQ(r[i].hash_ids, pool[i % 12].hash_ids) << i;
  }
  for (std::size_t i = 0; i < 40; ++i) {
    EXPECT_EQ(r[7 + i].hash_ids, pool[i % 12].hash_ids) << i;
    EXPECT_EQ(r[7 + i].prompt_tokens, pool[i % 12].prompt_tokens);
    EXPECT_EQ(r[7 + i].output_tokens, pool[i % 12].output_tokens);
  }
  // The same prompt sent again carries the same ids: stage 1's request 0 is stage 0's.
  EXPECT_EQ(r[7].hash_ids, r[0].hash_ids);
  // The shuffle mixes the groups (pool order is not group order).
  bool sorted = true;
  for (std::size_t i = 1; i < pool.size(); ++i) sorted &= pool[i - 1].group <= pool[i].group;
  EXPECT_FALSE(sorted);
}

TEST(InferencePerfSource, HashIdsShareTheSystemPromptWithinAGroupOnly) {
  InferencePerfSpec s = codegen_like();
  s.prompt_token_overhead = 5;
  InferencePerfSource source(s, 1);
  const auto& pool = source.pool();
  // 100 + 46 + 5 = 151 tokens: 10 ids, the first floor(100 / 16) = 6 wholly system prompt.
  std::set<std::uint64_t> seen_unique;
  for (const auto& a : pool) {
    ASSERT_EQ(a.prompt_tokens, 151);
    ASSERT_EQ(a.output_tokens, 7);
    ASSERT_EQ(a.hash_ids.size(), 10u);
    for (const auto& b : pool) {
      if (&a == &b) continue;
      for (std::size_t k = 0; k < 10; ++k) {
        if (a.group == b.group && k < 6) {
          EXPECT_EQ(a.hash_ids[k], b.hash_ids[k]);
        } else {
          EXPECT_NE(a.hash_ids[k], b.hash_ids[k]) << "block " << k;
        }
      }
    }
    for (std::size_t k = 6; k < 10; ++k) EXPECT_TRUE(seen_unique.insert(a.hash_ids[k]).second);
  }
  EXPECT_EQ(source.hash_block_tokens(), 16);
}

TEST(InferencePerfSource, SameSeedSameStreamOtherSeedOtherStream) {
  InferencePerfSpec s = codegen_like();
  s.shared_prefix.question_distribution = {.given = true, .min = 10, .max = 90, .mean = 50, .std_dev = 20};
  EXPECT_EQ(all_of(s, 5), all_of(s, 5));
  EXPECT_NE(all_of(s, 5), all_of(s, 6));
}

TEST(InferencePerfSource, LengthDistributionsClipAndRoundHalfToEven) {
  InferencePerfSpec s = codegen_like();
  // std_dev 0: every draw is the mean, 10.5 rounded half to even (np.round) = 10.
  s.shared_prefix.question_distribution = {.given = true, .min = 0, .max = 100, .mean = 10.5, .std_dev = 0};
  s.shared_prefix.output_distribution = {.given = true, .min = 1, .max = 300, .mean = 200, .std_dev = 150};
  InferencePerfSource source(s, 9);
  std::set<std::int64_t> outputs;
  for (const auto& p : source.pool()) {
    EXPECT_EQ(p.prompt_tokens, 100 + 10);
    EXPECT_GE(p.output_tokens, 1);
    EXPECT_LE(p.output_tokens, 300);
    outputs.insert(p.output_tokens);
  }
  EXPECT_GT(outputs.size(), 3u);  // drawn, not fixed
}

TEST(InferencePerfSource, WorkloadKindBuildsIt) {
  WorkloadSpec w;
  w.kind = WorkloadKind::kInferencePerf;
  w.inference_perf = codegen_like();
  w.seed = 4;
  auto source = make_source(w);
  EXPECT_EQ(drain(*source), all_of(w.inference_perf, 4));
  EXPECT_EQ(source->hash_block_tokens(), 16);
  EXPECT_NE(source->describe().find("inference-perf shared_prefix"), std::string::npos);
}

// validate() throws SpecError naming `field`.
void expect_refused(const InferencePerfSpec& s, const std::string& field) {
  try {
    validate(s);
    ADD_FAILURE() << "accepted, expected an error on " << field;
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), field) << e.what();
  }
}

TEST(InferencePerfSource, BadSettingsAreRefusedByName) {
  InferencePerfSpec s = codegen_like();
  s.stages[1].rate = 0;
  expect_refused(s, "inference_perf.stages[1].rate");
  s = codegen_like();
  s.stages[0].duration_s = -1;
  expect_refused(s, "inference_perf.stages[0].duration_s");
  s = codegen_like();
  s.stages[0] = {0.1, 5};  // int(0.5) = 0 requests
  expect_refused(s, "inference_perf.stages[0].rate");
  s = codegen_like();
  s.stages.clear();
  expect_refused(s, "inference_perf.stages");
  s = codegen_like();
  s.shared_prefix.num_groups = 0;
  expect_refused(s, "inference_perf.shared_prefix.num_groups");
  s = codegen_like();
  s.shared_prefix.question_len = -1;
  expect_refused(s, "inference_perf.shared_prefix.question_len");
  s = codegen_like();
  s.shared_prefix.system_prompt_len = -3;
  expect_refused(s, "inference_perf.shared_prefix.system_prompt_len");
  s = codegen_like();
  s.shared_prefix.output_len = 0;
  expect_refused(s, "inference_perf.shared_prefix.output_len");
  s = codegen_like();
  s.shared_prefix.enable_multi_turn_chat = true;
  expect_refused(s, "inference_perf.shared_prefix.enable_multi_turn_chat");
  s = codegen_like();
  s.shared_prefix.question_distribution = {.given = true, .min = 10, .max = 20, .mean = 30, .std_dev = 1};
  expect_refused(s, "inference_perf.shared_prefix.question_distribution.mean");
  s = codegen_like();
  s.stage_gap_s = -1;
  expect_refused(s, "inference_perf.stage_gap_s");
  s = codegen_like();
  s.hash_block_tokens = 0;
  expect_refused(s, "inference_perf.hash_block_tokens");
  WorkloadSpec w;
  w.kind = WorkloadKind::kInferencePerf;
  w.inference_perf = codegen_like();
  w.max_total_tokens = 100;
  EXPECT_THROW(validate(w), SpecError);
}

}  // namespace
}  // namespace pagesim::traces

// SessionSource and the sessions workload: each turn's prompt is the previous prompt + its
// output + a new input, hash ids shared along a session and across sessions of one system
// prompt (and nowhere else), think-time arrivals in order across interleaved sessions, the
// context limit, determinism under a seed, and the errors of bad settings.
#include "traces/session_source.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "test_util.h"
#include "traces/make_source.h"
#include "traces/seed.h"
#include "traces/trace_error.h"
#include "traces/workload_spec.h"

namespace pagesim::traces {
namespace {

using testing::drain;

LengthSpec fixed(std::int64_t v) { return {.kind = LengthKind::kFixed, .value = v}; }

// Sessions far apart (one every 10^6 s) of `turns` turns, 1 s apart: no interleaving.
WorkloadSpec one_at_a_time(std::int64_t turns, std::uint64_t max_requests) {
  WorkloadSpec w;
  w.kind = WorkloadKind::kSessions;
  w.arrival = {.kind = ArrivalKind::kConstant, .rate = 1e-6};
  w.lengths.prompt = fixed(100);
  w.lengths.output = fixed(50);
  w.sessions.turns = fixed(turns);
  w.sessions.think_time = {.kind = ThinkTimeKind::kFixed, .value_s = 1.0};
  w.sessions.system_prompts = 1;
  w.sessions.system_prompt_tokens = fixed(64);
  w.sessions.block_tokens = 16;
  w.max_requests = max_requests;
  return w;
}

bool is_prefix(const std::vector<std::uint64_t>& a, const std::vector<std::uint64_t>& b, std::size_t n) {
  return a.size() >= n && b.size() >= n && std::equal(a.begin(), a.begin() + static_cast<long>(n), b.begin());
}

TEST(SessionSource, EachTurnExtendsThePreviousPromptAndOutput) {
  auto source = make_source(one_at_a_time(4, 8));
  EXPECT_EQ(source->hash_block_tokens(), 16);
  const auto r = drain(*source);
  ASSERT_EQ(r.size(), 8u);
  // Session 1: 64 + 100, then + 50 + 100 per turn; arrivals 0, 1, 2, 3.
  const std::int64_t prompts[] = {164, 314, 464, 614};
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(r[static_cast<std::size_t>(k)].prompt_tokens, prompts[k]);
    EXPECT_EQ(r[static_cast<std::size_t>(k)].output_tokens, 50);
    EXPECT_DOUBLE_EQ(r[static_cast<std::size_t>(k)].arrival_s, k);
    EXPECT_EQ(r[static_cast<std::size_t>(k)].id, static_cast<std::uint64_t>(k));
    EXPECT_EQ(r[static_cast<std::size_t>(k)].hash_ids.size(),
              static_cast<std::size_t>(hash_blocks_for(prompts[k], 16)));
  }
  EXPECT_DOUBLE_EQ(r[4].arrival_s, 1e6);
  EXPECT_EQ(r[4].prompt_tokens, 164);
  // Turn k's full blocks are a prefix of turn k+1's ids; its partial last block, when it has
  // one, is not (it grew: 164 = 10 full blocks + 4 tokens; 464 = 29 full blocks, none partial).
  for (int k = 0; k < 3; ++k) {
    const auto& a = r[static_cast<std::size_t>(k)].hash_ids;
    const auto& b = r[static_cast<std::size_t>(k) + 1].hash_ids;
    const std::size_t full = static_cast<std::size_t>(r[static_cast<std::size_t>(k)].prompt_tokens / 16);
    EXPECT_TRUE(is_prefix(a, b, full)) << k;
    ASSERT_EQ(a.size(), full + (prompts[k] % 16 != 0 ? 1 : 0)) << k;
    if (full < a.size()) {
      EXPECT_NE(a[full], b[full]) << k;
    }
  }
  // Two sessions share the system prompt's 4 full blocks (64 tokens) and nothing after.
  EXPECT_TRUE(is_prefix(r[0].hash_ids, r[4].hash_ids, 4));
  EXPECT_NE(r[0].hash_ids[4], r[4].hash_ids[4]);
  // Equal ids mean equal prefixes: an id never reappears at another position.
  std::map<std::uint64_t, std::size_t> position;
  for (const auto& q : r)
    for (std::size_t i = 0; i < q.hash_ids.size(); ++i) {
      const auto [it, fresh] = position.emplace(q.hash_ids[i], i);
      EXPECT_EQ(it->second, i);
    }
}

TEST(SessionSource, WithoutSystemPromptsSessionsShareNothing) {
  WorkloadSpec w = one_at_a_time(2, 4);
  w.sessions.system_prompts = 0;
  const auto r = drain(*make_source(w));
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].prompt_tokens, 100);
  EXPECT_EQ(r[1].prompt_tokens, 250);
  EXPECT_NE(r[0].hash_ids[0], r[2].hash_ids[0]);  // same lengths, different contents
  EXPECT_TRUE(is_prefix(r[0].hash_ids, r[1].hash_ids, 6));
}

TEST(SessionSource, InterleavedSessionsComeOutInArrivalOrderAndDeterministically) {
  WorkloadSpec w;
  w.kind = WorkloadKind::kSessions;
  w.arrival = {.kind = ArrivalKind::kPoisson, .rate = 2.0};
  w.lengths.prompt = {.kind = LengthKind::kUniform, .lo = 1, .hi = 300};
  w.lengths.output = {.kind = LengthKind::kUniform, .lo = 0, .hi = 300};
  w.sessions.turns = {.kind = LengthKind::kUniform, .lo = 1, .hi = 6};
  w.sessions.think_time = {.kind = ThinkTimeKind::kExponential, .mean_s = 5.0};
  w.sessions.system_prompts = 3;
  w.sessions.system_prompt_tokens = {.kind = LengthKind::kUniform, .lo = 10, .hi = 200};
  w.duration_s = 120;
  w.seed = 42;
  const auto a = drain(*make_source(w));
  const auto b = drain(*make_source(w));
  ASSERT_GT(a.size(), 200u);
  EXPECT_EQ(a, b);
  for (std::size_t i = 1; i < a.size(); ++i) {
    EXPECT_LE(a[i - 1].arrival_s, a[i].arrival_s);
    EXPECT_EQ(a[i].id, i);
  }
  w.seed = 43;
  EXPECT_NE(drain(*make_source(w)), a);
  // Every request's ids cover its prompt.
  for (const auto& r : a) EXPECT_EQ(r.hash_ids.size(), static_cast<std::size_t>(hash_blocks_for(r.prompt_tokens, 16)));
}

TEST(SessionSource, EmpiricalTurnLengthsFromALengthsFile) {
  WorkloadSpec w = one_at_a_time(3, 6);
  w.lengths.kind = LengthsKind::kEmpirical;
  w.lengths.path = testing::bundled("sharegpt_opt_lengths.csv");
  const auto r = drain(*make_source(w));
  ASSERT_EQ(r.size(), 6u);
  for (std::size_t k = 1; k < 3; ++k) EXPECT_GT(r[k].prompt_tokens, r[k - 1].prompt_tokens + r[k - 1].output_tokens);
}

TEST(SessionSource, ASessionEndsBeforeATurnBeyondTheContextLimit) {
  WorkloadSpec w = one_at_a_time(10, 6);
  w.sessions.max_context_tokens = 500;  // turns need 214, 364, 514 tokens: two fit
  const auto r = drain(*make_source(w));
  ASSERT_EQ(r.size(), 6u);
  EXPECT_EQ(r[0].prompt_tokens, 164);
  EXPECT_EQ(r[1].prompt_tokens, 314);
  EXPECT_EQ(r[2].prompt_tokens, 164);  // the next session
  EXPECT_DOUBLE_EQ(r[2].arrival_s, 1e6);
}

void expect_spec_error(const WorkloadSpec& spec, const std::string& field, const std::string& words) {
  try {
    make_source(spec);
    ADD_FAILURE() << "no SpecError for " << field;
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), field) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(SessionSource, BadSettingsNameTheirField) {
  WorkloadSpec w = one_at_a_time(2, 4);
  w.sessions.turns = fixed(0);
  expect_spec_error(w, "sessions.turns.value", "found 0");
  w = one_at_a_time(2, 4);
  w.sessions.think_time = {.kind = ThinkTimeKind::kExponential, .mean_s = 0};
  expect_spec_error(w, "sessions.think_time.mean_s", "found 0");
  w = one_at_a_time(2, 4);
  w.sessions.system_prompts = -1;
  expect_spec_error(w, "sessions.system_prompts", "found -1");
  w = one_at_a_time(2, 4);
  w.sessions.system_prompt_tokens = fixed(0);
  expect_spec_error(w, "sessions.system_prompt_tokens.value", "found 0");
  w = one_at_a_time(2, 4);
  w.sessions.block_tokens = 0;
  expect_spec_error(w, "sessions.block_tokens", "found 0");
  w = one_at_a_time(2, 4);
  w.sessions.max_context_tokens = -5;
  expect_spec_error(w, "sessions.max_context_tokens", "found -5");
  w = one_at_a_time(2, 4);
  w.max_total_tokens = 2048;
  expect_spec_error(w, "max_total_tokens", "sessions.max_context_tokens");
  w = one_at_a_time(2, 4);
  w.lengths.kind = LengthsKind::kCycleShuffle;
  w.lengths.path = "x.csv";
  expect_spec_error(w, "lengths.kind", "distributions or empirical");
  w = one_at_a_time(2, 0);
  expect_spec_error(w, "duration_s", "max_requests");
  w = one_at_a_time(2, 4);
  w.sessions.system_prompt_tokens = fixed(kMaxTokens);  // + a 100-token input: too long
  try {
    drain(*make_source(w));
    ADD_FAILURE() << "no SpecError";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "sessions.system_prompt_tokens") << e.what();
  }
  w = one_at_a_time(2, 4);
  w.arrival.rate = 0;
  expect_spec_error(w, "arrival.rate", "found 0");
}

}  // namespace
}  // namespace pagesim::traces

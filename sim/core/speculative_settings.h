// SpeculativeSettings: speculative decoding as a run models it (config section `speculative`).
//
// Each decode step of a single-sequence request verifies up to k tokens proposed by a
// drafter in one forward pass of the target model (Leviathan et al. 2023, arXiv:2211.17192;
// vLLM v1's scheduler schedules 1 + len(spec_token_ids) tokens per decoding request,
// vllm/v1/core/sched/scheduler.py). Proposal i (from 1) is accepted with probability
// acceptance[i-1] given that proposals 1..i-1 were (a single rate r means r at every
// position, so i proposals in a row are accepted with probability r^i: Leviathan's i.i.d.
// model); the step emits the accepted proposals plus one token of the target's own, so the
// expected tokens per step are 1 + Σ_i Π_{j<=i} acceptance[j-1] (expected_accepted()).
// The drafter: `draft_model` (a smaller model, k forward passes per step), `eagle` (a head of
// `eagle_layers` decoder layers over the target's hidden states, k passes, EAGLE: Li et al.
// 2024, arXiv:2401.15077), `ngram` (prompt lookup on the host: no GPU time, no KV). A drafter
// with KV keeps it in its own pool or in a share of the target's (vLLM v1 gives the draft's
// attention layers blocks of the same KV budget, one per target block). Plain values; the
// config checks every field (ranges, lengths) and names the key.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace pagesim::sim {

enum class SpeculativeMethod { kNone, kDraftModel, kEagle, kNgram };
enum class DraftKvPlacement { kNone, kOwnPool, kShared };

inline constexpr std::array<std::pair<SpeculativeMethod, std::string_view>, 4> kSpeculativeMethodNames = {{
    {SpeculativeMethod::kNone, "none"},
    {SpeculativeMethod::kDraftModel, "draft_model"},
    {SpeculativeMethod::kEagle, "eagle"},
    {SpeculativeMethod::kNgram, "ngram"},
}};
inline constexpr std::array<std::pair<DraftKvPlacement, std::string_view>, 3> kDraftKvPlacementNames = {{
    {DraftKvPlacement::kNone, "none"},
    {DraftKvPlacement::kOwnPool, "own_pool"},
    {DraftKvPlacement::kShared, "shared"},
}};

// The most tokens one step may propose: a bound on a setting (vLLM's EAGLE configs use 1-8,
// its n-gram examples 5-10).
inline constexpr std::int64_t kMaxSpeculativeTokens = 64;

struct SpeculativeSettings {
  SpeculativeMethod method = SpeculativeMethod::kNone;  // kNone: no speculation (the default)
  std::int64_t k = 0;  // tokens proposed per step, in [0, kMaxSpeculativeTokens]; 0 decodes
                       // exactly as without speculation
  // Per-position acceptance probabilities, conditional on the positions before being
  // accepted: one value (every position) or k values, each in [0, 1].
  std::vector<double> acceptance{0.7};
  DraftKvPlacement draft_kv = DraftKvPlacement::kNone;
  // The draft's KV bytes per token over the target's (set by the run from the draft model or
  // EAGLE's layers; 0 without draft KV). Not a config key.
  double draft_kv_ratio = 0;
  // Slots per step for the drafter's next proposals (vLLM v1's num_lookahead_tokens: k for
  // EAGLE, 0 otherwise; proposed_slots.h). Not a config key: the run sets it.
  std::int64_t lookahead = 0;
  std::uint64_t seed = 0;  // the acceptance draws' seed (the experiment's seed); not a config key

  bool enabled() const { return method != SpeculativeMethod::kNone; }
  // Acceptance probability of proposal i (from 1), given proposals 1..i-1 were accepted.
  double acceptance_at(std::int64_t i) const {
    if (acceptance.empty()) return 0;
    return acceptance[static_cast<std::size_t>(std::min<std::int64_t>(i, static_cast<std::int64_t>(acceptance.size())) - 1)];
  }
  // Expected accepted proposals of a step proposing `proposals` tokens: Σ_i Π_{j<=i} p_j.
  double expected_accepted(std::int64_t proposals) const {
    double run = 1, sum = 0;
    for (std::int64_t i = 1; i <= proposals; ++i) {
      run *= acceptance_at(i);
      sum += run;
    }
    return sum;
  }
};

}  // namespace pagesim::sim

// ScoreBeamModel: beam survival by vLLM's own beam selection (BeamSelector) run on
// log-probabilities drawn from a one-parameter stochastic stand-in for the language model.
//
// The stand-in: for every (beam, step) the next-token entropy is drawn H ~ Exponential with
// mean `mean_entropy_nats`, and the beam's next-token distribution over ranks is the
// geometric one with that entropy (GeometricRanks). The parameter is interpretable — a
// model's mean next-token entropy, which can be measured on real outputs — not a constant
// tuned to a target saving. Each group keeps its beams' cumulative log-probabilities, in the
// order reshape_beams gives the group. At the fork after the prompt the k beams take the k
// likeliest distinct first tokens of one drawn distribution (as the artifact's prompt step
// does), so beam j starts at ln p_(j+1); a recompute restarts a group the same way, since the
// engine rebuilds it from one sequence.
// The limits (no value gives the neutral model):
//   mean_entropy_nats = 0: every token is certain (ln P = 0 for rank 1, -inf below), so with
//     BeamSelector's tie rule each beam keeps its own token and beams never switch: k disjoint
//     lineages sharing only the prompt, exactly like parallel sampling with n = k.
//   mean_entropy_nats -> 0+: beams switch whenever one beam's second-best token beats another
//     beam's best; both log-probabilities scale like ln H, so that is a coin flip, not a rare
//     event, and the saving jumps well above its value at 0 (about halfway to the maximum).
//   mean_entropy_nats -> inf: a beam's k best tokens are nearly equally likely (ln p ~ 1 - H)
//     while beams differ by O(H), so every chosen candidate comes from the one best beam and
//     the group collapses onto one lineage each step: the most sharing any model gives
//     (beams differ only in their newest token), slightly above the neutral model's.
// Deterministic given the seed: one std::mt19937_64 stream through Boost distributions, in
// the engine's deterministic call order. The log-probabilities then go through libm (exp,
// log1p, expm1), so byte-identical runs across platforms also need matching libm results.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <unordered_map>
#include <vector>

#include "sim/beam/beam_model.h"
#include "sim/beam/beam_selection.h"

namespace pagesim::sim {

class ScoreBeamModel final : public BeamModel {
 public:
  // REQUIRES: mean_entropy_nats finite and >= 0.
  ScoreBeamModel(double mean_entropy_nats, std::uint64_t seed);

  // Starts (or restarts) the group: beam j's score = ln p_(j+1) of one drawn distribution.
  void on_group_forked(std::uint64_t request, std::int32_t k) override;
  // One BeamSelector step on freshly drawn log-probabilities; parents come out in
  // reshape_beams order (non-decreasing) and the group's scores are kept in that order. A
  // group not started at width k (none in the engine) is started first.
  void draw_parents(std::uint64_t request, std::int32_t k, std::vector<std::int32_t>& parents) override;
  void on_finished(std::uint64_t request) override { scores_.erase(request); }

  // `request`'s cumulative log-probabilities in group order; empty when not known. Valid
  // until the next call on this model.
  std::span<const double> scores(std::uint64_t request) const;
  std::size_t num_groups() const { return scores_.size(); }

 private:
  double draw_entropy();

  double mean_entropy_nats_;
  std::mt19937_64 rng_;
  std::unordered_map<std::uint64_t, std::vector<double>> scores_;  // request -> beam scores
  std::vector<double> logprobs_;  // k x k scratch
  BeamSelector selector_;
};

}  // namespace pagesim::sim

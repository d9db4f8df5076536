// NeutralBeamModel: beam survival as a neutral Wright–Fisher process — no parameter to tune.
//
// After every decode step of a group with k beams, each of the k next beams picks its
// parent uniformly at random among the current k (with replacement). A beam nobody picks
// dies (its blocks are freed); a beam picked m times continues and forks m - 1 times,
// sharing its blocks. The beams coalesce towards a common ancestor within about 2k steps, so
// long prefixes are shared — faster than real beam search, whose next-token scores keep
// beams on their own hypotheses longer (see ScoreBeamModel). Keeps no per-request state.
// Deterministic given the seed; not thread-safe.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "sim/beam/beam_model.h"

namespace pagesim::sim {

class NeutralBeamModel final : public BeamModel {
 public:
  explicit NeutralBeamModel(std::uint64_t seed) : rng_(seed) {}

  void on_group_forked(std::uint64_t, std::int32_t) override {}
  // Ignores `request`: k uniform draws from one stream shared by all groups.
  void draw_parents(std::uint64_t request, std::int32_t k, std::vector<std::int32_t>& parents) override;
  void on_finished(std::uint64_t) override {}

 private:
  std::mt19937_64 rng_;
};

}  // namespace pagesim::sim

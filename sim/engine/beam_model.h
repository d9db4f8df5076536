// BeamModel: which beams of a beam search survive each decode step — a documented,
// seeded stochastic stand-in for real token scores.
//
// After every decode step of a group with k beams, each of the k next beams picks its
// parent uniformly at random among the current k (with replacement): a neutral
// Wright–Fisher model with no parameter to tune. A beam nobody picks dies (its blocks are
// freed); a beam picked m times continues and forks m - 1 times, sharing its blocks. Over
// time the beams coalesce towards a common ancestor, as real beams do, so long prefixes are
// shared. Deterministic given the seed. Not thread-safe.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace pagesim::sim {

class BeamModel {
 public:
  explicit BeamModel(std::uint64_t seed) : rng_(seed) {}
  // parents[j] in [0, k): the parent index of next beam j. REQUIRES: k >= 1.
  void draw_parents(std::int32_t k, std::vector<std::int32_t>& parents);

 private:
  std::mt19937_64 rng_;
};

}  // namespace pagesim::sim

#include "sim/beam/score_beam_model.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include <boost/random/exponential_distribution.hpp>

#include "sim/beam/geometric_ranks.h"

namespace pagesim::sim {

ScoreBeamModel::ScoreBeamModel(double mean_entropy_nats, std::uint64_t seed)
    : mean_entropy_nats_(mean_entropy_nats), rng_(seed) {
  assert(std::isfinite(mean_entropy_nats) && mean_entropy_nats >= 0);
}

double ScoreBeamModel::draw_entropy() {
  // A unit exponential scaled by the mean: the same stream for every mean (0 included), so
  // runs that differ only in the mean see the same underlying draws.
  boost::random::exponential_distribution<double> unit(1.0);
  return mean_entropy_nats_ * unit(rng_);
}

void ScoreBeamModel::on_group_forked(std::uint64_t request, std::int32_t k) {
  assert(k >= 1);
  const GeometricRanks first = GeometricRanks::with_entropy(draw_entropy());
  std::vector<double>& s = scores_[request];
  s.resize(static_cast<std::size_t>(k));
  for (std::int32_t j = 0; j < k; ++j) s[static_cast<std::size_t>(j)] = first.log_prob(j + 1);
}

void ScoreBeamModel::draw_parents(std::uint64_t request, std::int32_t k, std::vector<std::int32_t>& parents) {
  assert(k >= 1);
  auto it = scores_.find(request);
  if (it == scores_.end() || it->second.size() != static_cast<std::size_t>(k)) {
    on_group_forked(request, k);
    it = scores_.find(request);
  }
  std::vector<double>& s = it->second;
  const auto n = static_cast<std::size_t>(k);
  logprobs_.resize(n * n);
  for (std::size_t i = 0; i < n; ++i) {
    const GeometricRanks ranks = GeometricRanks::with_entropy(draw_entropy());
    for (std::size_t r = 0; r < n; ++r) logprobs_[i * n + r] = ranks.log_prob(static_cast<std::int64_t>(r) + 1);
  }
  selector_.select(s, logprobs_);
  parents.assign(selector_.parents().begin(), selector_.parents().end());
  std::copy(selector_.scores().begin(), selector_.scores().end(), s.begin());
}

std::span<const double> ScoreBeamModel::scores(std::uint64_t request) const {
  const auto it = scores_.find(request);
  return it == scores_.end() ? std::span<const double>() : std::span<const double>(it->second);
}

}  // namespace pagesim::sim

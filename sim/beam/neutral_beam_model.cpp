#include "sim/beam/neutral_beam_model.h"

#include <boost/random/uniform_int_distribution.hpp>

namespace pagesim::sim {

void NeutralBeamModel::draw_parents(std::uint64_t, std::int32_t k, std::vector<std::int32_t>& parents) {
  // Boost's distribution gives the same stream on every standard library.
  boost::random::uniform_int_distribution<std::int32_t> pick(0, k - 1);
  parents.resize(static_cast<std::size_t>(k));
  for (auto& p : parents) p = pick(rng_);
}

}  // namespace pagesim::sim

// AcceptanceSampler: how many of a step's proposed tokens verification accepts, drawn as
// SpeculativeSettings describes (each position accepted with its conditional probability,
// stopping at the first rejection). Seeded from the experiment's seed, so a run's draws
// repeat; a step proposing nothing draws nothing (k = 0 leaves the random stream, and so
// every output, as without speculation). Owned by the scheduler that plans the steps; not
// thread-safe.
#pragma once

#include <cstdint>
#include <random>

#include "sim/core/speculative_settings.h"

namespace pagesim::sim {

class AcceptanceSampler {
 public:
  // `settings` is copied.
  explicit AcceptanceSampler(const SpeculativeSettings& settings)
      : settings_(settings), rng_(settings.seed ^ 0x7370656364656344ULL) {}  // "specdecD"

  // Accepted proposals of a step proposing `proposals` (>= 0) tokens, in [0, proposals].
  std::int64_t draw(std::int64_t proposals) {
    std::int64_t accepted = 0;
    while (accepted < proposals && uniform() < settings_.acceptance_at(accepted + 1)) ++accepted;
    return accepted;
  }

  const SpeculativeSettings& settings() const { return settings_; }

 private:
  // In [0, 1), from 53 bits: the same on every standard library (unlike its distributions).
  double uniform() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }

  SpeculativeSettings settings_;
  std::mt19937_64 rng_;
};

}  // namespace pagesim::sim

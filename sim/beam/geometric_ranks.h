// GeometricRanks: the stand-in language model's next-token distribution over token ranks.
//
// Rank r = 1, 2, ... (1 = the most likely token) has probability p_r = (1 - q) q^(r-1): one
// ratio q in [0, 1) fixes the whole distribution, so one number — its entropy
// H(q) = [-(1-q) ln(1-q) - q ln q] / (1-q) nats — does too. H = 0 is q = 0 (one certain
// token); H grows without bound as q -> 1 (ever flatter). Beam search reads only the log-
// probabilities of the few best ranks, which these give in closed form. Plain value type.
#pragma once

#include <cstdint>
#include <limits>

namespace pagesim::sim {

struct GeometricRanks {
  double log_first = 0;                                         // ln p_1 = ln(1 - q)
  double log_ratio = -std::numeric_limits<double>::infinity();  // ln q (-inf when q = 0)

  // ln p_rank: ln(1-q) + (rank-1) ln q; -inf for rank > 1 when q = 0. REQUIRES: rank >= 1.
  double log_prob(std::int64_t rank) const {
    return rank == 1 ? log_first : log_first + static_cast<double>(rank - 1) * log_ratio;
  }
  // The entropy in nats, computed from ln(1 - q) without cancellation.
  double entropy() const;

  // The distribution whose entropy is `nats`, to about 1e-15 relative (safeguarded Newton).
  // REQUIRES: nats finite and >= 0.
  static GeometricRanks with_entropy(double nats);
  // The distribution with ratio q. REQUIRES: 0 <= q < 1.
  static GeometricRanks with_ratio(double q);
};

// H(q) by the textbook formula (for tests and readers; loses precision as q -> 1).
// REQUIRES: 0 <= q < 1.
double geometric_entropy(double q);

}  // namespace pagesim::sim

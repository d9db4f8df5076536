// The stand-in language model's next-token distribution: the entropy solver inverts
// H(q) across the whole range, and the log-probabilities are the geometric ones.
#include "sim/beam/geometric_ranks.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace pagesim::sim {
namespace {

TEST(GeometricRanks, SolverInvertsTheEntropy) {
  for (double q : {0.0, 1e-15, 1e-9, 1e-6, 1e-3, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99,
                   0.999, 0.9999}) {
    const double h = geometric_entropy(q);
    const GeometricRanks g = GeometricRanks::with_entropy(h);
    EXPECT_NEAR(std::exp(g.log_ratio), q, 1e-9) << "q = " << q;
    EXPECT_NEAR(g.entropy(), h, 1e-9) << "q = " << q;
  }
  // And from the entropy side, far into the flat tail where 1 - q is below double epsilon.
  for (double h = 0; h <= 200; h += 0.37) {
    const GeometricRanks g = GeometricRanks::with_entropy(h);
    EXPECT_NEAR(g.entropy(), h, 1e-9 * std::max(1.0, h)) << "H = " << h;
    EXPECT_LE(g.log_first, 0);
    EXPECT_LE(g.log_ratio, 0);
  }
  // Nearly certain tokens: relative precision holds down to the smallest entropies.
  for (double h : {1e-300, 1e-100, 1e-20, 1e-9}) EXPECT_NEAR(GeometricRanks::with_entropy(h).entropy() / h, 1.0, 1e-12) << h;
}

TEST(GeometricRanks, EntropyIsMonotoneInTheRatio) {
  double last = -1;
  for (double h : {1e-12, 1e-6, 0.01, 0.1, 0.5, 1.0, 2.0, 4.0, 8.0, 30.0}) {
    const double ratio = GeometricRanks::with_entropy(h).log_ratio;
    EXPECT_GT(ratio, last == -1 ? -std::numeric_limits<double>::infinity() : last) << "H = " << h;
    last = ratio;
  }
}

TEST(GeometricRanks, ZeroEntropyIsACertainToken) {
  const GeometricRanks g = GeometricRanks::with_entropy(0);
  EXPECT_EQ(g.log_prob(1), 0.0);
  EXPECT_EQ(g.log_prob(2), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(g.log_prob(6), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(g.entropy(), 0.0);
  EXPECT_EQ(geometric_entropy(0), 0.0);
}

TEST(GeometricRanks, LogProbsAreGeometric) {
  const GeometricRanks g = GeometricRanks::with_ratio(0.5);
  EXPECT_DOUBLE_EQ(g.log_prob(1), std::log(0.5));
  EXPECT_DOUBLE_EQ(g.log_prob(3), std::log(0.125));
  double total = 0;
  for (int r = 1; r <= 200; ++r) total += std::exp(g.log_prob(r));
  EXPECT_NEAR(total, 1.0, 1e-12);
  // H(1/2) = 2 ln 2: the textbook value.
  EXPECT_NEAR(geometric_entropy(0.5), 2 * std::log(2.0), 1e-15);
  EXPECT_NEAR(g.entropy(), 2 * std::log(2.0), 1e-15);
}

}  // namespace
}  // namespace pagesim::sim

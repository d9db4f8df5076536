#include "sim/beam/geometric_ranks.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace pagesim::sim {
namespace {

// The distribution and its entropy are computed from u = ln(1 - q) = ln p_1 in (-inf, 0]:
// u -> 0 is a certain token, u -> -inf a flat one; q = -expm1(u) and p = exp(u) stay exact
// at both ends, where q or 1 - q would cancel.

double log_ratio_at(double u) {  // ln q
  const double p = std::exp(u);
  return p < 0.5 ? std::log1p(-p) : std::log(-std::expm1(u));
}

// H = -ln p - (q/p) ln q = -u + q·g with g = -ln(q)/p, which tends to 1 as p -> 0.
double entropy_at(double u) {
  if (u == 0) return 0;
  const double p = std::exp(u);
  const double q = -std::expm1(u);
  const double g = p == 0 ? 1.0 : p < 0.5 ? -std::log1p(-p) / p : -std::log(q) / p;
  return -u + q * g;
}

}  // namespace

double GeometricRanks::entropy() const { return entropy_at(log_first); }

GeometricRanks GeometricRanks::with_entropy(double nats) {
  assert(std::isfinite(nats) && nats >= 0);
  if (nats == 0) return GeometricRanks{};
  // 0 <= q·g <= 1 gives -u <= H <= 1 - u: the root lies in [-H, min(0, 1 - H)], where H
  // falls as u rises (dH/du = ln q / p < 0). Newton steps, kept inside a shrinking bracket
  // (bisecting when a step would leave it), stop when the step is below rounding.
  double lo = -nats, hi = std::min(0.0, 1.0 - nats);
  double u = 0.5 * (lo + hi);
  for (int i = 0; i < 200; ++i) {
    const double f = entropy_at(u) - nats;
    if (f == 0) break;
    (f > 0 ? lo : hi) = u;
    const double slope = log_ratio_at(u) / std::exp(u);
    double next = u - f / slope;
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);  // also catches a NaN step
    const bool done = std::abs(next - u) <= 1e-15 * std::abs(u) || next <= lo || next >= hi;
    u = next;
    if (done) break;
  }
  return GeometricRanks{u, log_ratio_at(u)};
}

GeometricRanks GeometricRanks::with_ratio(double q) {
  assert(q >= 0 && q < 1);
  return GeometricRanks{std::log1p(-q), q == 0 ? -std::numeric_limits<double>::infinity() : std::log(q)};
}

double geometric_entropy(double q) {
  assert(q >= 0 && q < 1);
  const double q_log_q = q == 0 ? 0.0 : q * std::log(q);
  return (-(1 - q) * std::log1p(-q) - q_log_q) / (1 - q);
}

}  // namespace pagesim::sim

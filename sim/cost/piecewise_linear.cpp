#include "sim/cost/piecewise_linear.h"

#include <algorithm>
#include <cassert>
#include <functional>
#include <utility>

namespace pagesim::sim {

namespace {

[[maybe_unused]] bool strictly_increasing(const std::vector<double>& v) {
  return std::adjacent_find(v.begin(), v.end(), std::greater_equal<double>()) == v.end();
}

// The segment [k, k+1] of `knots` used for x (the first or last one outside the range), and
// x's position t along it (t < 0 or t > 1 when extrapolating). One knot: k = 0, t = 0.
struct Segment {
  std::size_t k = 0;
  double t = 0;
};

Segment locate(const std::vector<double>& knots, double x) {
  const std::size_t n = knots.size();
  if (n == 1) return {};
  const auto it = std::upper_bound(knots.begin(), knots.end(), x);
  std::size_t k = it == knots.begin() ? 0 : static_cast<std::size_t>(it - knots.begin()) - 1;
  k = std::min(k, n - 2);
  return {k, (x - knots[k]) / (knots[k + 1] - knots[k])};
}

}  // namespace

PiecewiseLinear::PiecewiseLinear(std::vector<double> xs, std::vector<double> ys)
    : xs_(std::move(xs)), ys_(std::move(ys)) {
  assert(!xs_.empty() && xs_.size() == ys_.size() && strictly_increasing(xs_));
}

double PiecewiseLinear::operator()(double x) const {
  if (xs_.size() == 1) return ys_[0];
  const Segment s = locate(xs_, x);
  return ys_[s.k] + s.t * (ys_[s.k + 1] - ys_[s.k]);
}

BilinearGrid::BilinearGrid(std::vector<double> xs, std::vector<double> ys,
                           std::vector<double> values)
    : xs_(std::move(xs)), ys_(std::move(ys)), values_(std::move(values)) {
  assert(!xs_.empty() && !ys_.empty() && values_.size() == xs_.size() * ys_.size() &&
         strictly_increasing(xs_) && strictly_increasing(ys_));
}

double BilinearGrid::operator()(double x, double y) const {
  const std::size_t ny = ys_.size();
  const Segment sx = locate(xs_, x);
  const Segment sy = locate(ys_, y);
  const std::size_t i1 = xs_.size() == 1 ? sx.k : sx.k + 1;
  const std::size_t j1 = ny == 1 ? sy.k : sy.k + 1;
  const auto at = [&](std::size_t i, std::size_t j) { return values_[i * ny + j]; };
  const double low = at(sx.k, sy.k) + sy.t * (at(sx.k, j1) - at(sx.k, sy.k));
  const double high = at(i1, sy.k) + sy.t * (at(i1, j1) - at(i1, sy.k));
  return low + sx.t * (high - low);
}

}  // namespace pagesim::sim

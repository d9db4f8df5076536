// Piecewise-linear interpolation on 1-D and 2-D grids, as used by ProfileCostModel.
//
// PiecewiseLinear: y(x) through knots (x_i, y_i) with strictly increasing x_i; linear between
// knots, and beyond either end extrapolated along the first or last segment. One knot gives a
// constant.
// BilinearGrid: v(x, y) on the full grid xs × ys (both strictly increasing, one value per
// point); bilinear inside a cell, extrapolated along the edge cells outside. An axis with one
// value is constant along that axis.
// Both own their vectors; evaluation is a binary search per axis, no allocation. Immutable
// after construction; safe to share between threads.
#pragma once

#include <cstddef>
#include <vector>

namespace pagesim::sim {

class PiecewiseLinear {
 public:
  // REQUIRES: xs nonempty, strictly increasing; ys.size() == xs.size().
  PiecewiseLinear(std::vector<double> xs, std::vector<double> ys);

  double operator()(double x) const;
  std::size_t size() const { return xs_.size(); }

 private:
  std::vector<double> xs_;
  std::vector<double> ys_;
};

class BilinearGrid {
 public:
  // values[i * ys.size() + j] is the value at (xs[i], ys[j]).
  // REQUIRES: xs and ys nonempty, strictly increasing; values.size() == xs.size() * ys.size().
  BilinearGrid(std::vector<double> xs, std::vector<double> ys, std::vector<double> values);

  double operator()(double x, double y) const;
  std::size_t size() const { return values_.size(); }

 private:
  std::vector<double> xs_;
  std::vector<double> ys_;
  std::vector<double> values_;
};

}  // namespace pagesim::sim

#include "sim/cost/piecewise_linear.h"

#include <gtest/gtest.h>

namespace pagesim::sim {
namespace {

TEST(CostPiecewiseLinear, ExactAtKnotsLinearBetween) {
  const PiecewiseLinear f({0, 10, 20}, {1, 2, 6});
  EXPECT_DOUBLE_EQ(f(0), 1);
  EXPECT_DOUBLE_EQ(f(10), 2);
  EXPECT_DOUBLE_EQ(f(20), 6);
  EXPECT_DOUBLE_EQ(f(5), 1.5);
  EXPECT_DOUBLE_EQ(f(15), 4);
}

TEST(CostPiecewiseLinear, ExtrapolatesAlongEdgeSegments) {
  const PiecewiseLinear f({0, 10, 20}, {1, 2, 6});
  EXPECT_DOUBLE_EQ(f(30), 10);   // last segment slope 0.4
  EXPECT_DOUBLE_EQ(f(-10), 0);   // first segment slope 0.1
  const PiecewiseLinear one({5}, {3});
  EXPECT_DOUBLE_EQ(one(-100), 3);
  EXPECT_DOUBLE_EQ(one(100), 3);
}

TEST(CostPiecewiseLinear, BilinearInsideAndOutside) {
  // v(x, y) = 1 + 2x + 3y + xy is reproduced exactly by bilinear interpolation/extrapolation.
  const auto v = [](double x, double y) { return 1 + 2 * x + 3 * y + x * y; };
  const std::vector<double> xs{0, 2, 6}, ys{1, 5};
  std::vector<double> values;
  for (double x : xs)
    for (double y : ys) values.push_back(v(x, y));
  const BilinearGrid g(xs, ys, values);
  for (double x : {0.0, 1.0, 2.0, 3.5, 6.0, 9.0, -1.0}) {
    for (double y : {1.0, 2.5, 5.0, 8.0, 0.0}) {
      EXPECT_NEAR(g(x, y), v(x, y), 1e-12) << x << "," << y;
    }
  }
}

TEST(CostPiecewiseLinear, BilinearSingleValueAxisIsConstant) {
  const BilinearGrid g({1, 3}, {16}, {10, 30});
  EXPECT_DOUBLE_EQ(g(2, 16), 20);
  EXPECT_DOUBLE_EQ(g(2, 32), 20);
  EXPECT_DOUBLE_EQ(g(5, 8), 50);
  const BilinearGrid point({4}, {7}, {2.5});
  EXPECT_DOUBLE_EQ(point(0, 0), 2.5);
}

}  // namespace
}  // namespace pagesim::sim

#include "sim/cost/operator_table.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "sim/cost/cost_error.h"

namespace pagesim::sim {
namespace {

constexpr std::string_view kCols[] = {"dtype", "x", "y"};

// A 2-D table over x (outer) and y; the x = 4 row lacks y = 30 (a ragged corner).
constexpr std::string_view kText =
    "# a comment\n"
    "dtype,x,y,latency_us\n"
    "bf16,1,10,10\n"
    "bf16,1,20,20\n"
    "bf16,1,30,40\n"
    "bf16,2,10,30\n"
    "bf16,2,20,40\n"
    "bf16,2,30,60\n"
    "bf16,4,10,50\n"
    "bf16,4,20,90\n"
    "fp8,1,10,1\n";

std::vector<std::size_t> rows_of(const OperatorTable& t, std::string_view dtype) {
  std::vector<std::size_t> rows;
  for (std::size_t r = 0; r < t.rows(); ++r)
    if (t.text(r, 0) == dtype) rows.push_back(r);
  return rows;
}

OperatorGrid grid(const OperatorTable& t, AxisBlend y_blend = AxisBlend::kLinear) {
  return OperatorGrid(t, rows_of(t, "bf16"), {{t.column("x")}, {t.column("y"), y_blend}});
}

GridLookup at(const OperatorGrid& g, double x, double y) {
  const double c[] = {x, y};
  return g(c);
}

TEST(OperatorTable, ParsesRowsAndKeepsLines) {
  const OperatorTable t = OperatorTable::parse(kText, "t.csv", kCols);
  EXPECT_EQ(t.rows(), 9u);
  EXPECT_EQ(t.text(0, 0), "bf16");
  EXPECT_EQ(t.number(0, 2), 10.0);
  EXPECT_EQ(t.latency_us(8), 1.0);
  EXPECT_EQ(t.line(0), 3);
}

TEST(OperatorTable, ExactAtMeasuredPoints) {
  const OperatorTable t = OperatorTable::parse(kText, "t.csv", kCols);
  const OperatorGrid g = grid(t);
  for (std::size_t r : rows_of(t, "bf16")) {
    const GridLookup l = at(g, t.number(r, 1), t.number(r, 2));
    EXPECT_EQ(l.seconds, t.latency_us(r) * 1e-6) << "line " << t.line(r);
    EXPECT_FALSE(l.extrapolated);
  }
}

TEST(OperatorTable, LinearBetweenNeighbours) {
  const OperatorGrid g = grid(OperatorTable::parse(kText, "t.csv", kCols));
  EXPECT_NEAR(at(g, 1, 15).seconds, 15e-6, 1e-15);
  EXPECT_NEAR(at(g, 1.5, 10).seconds, 20e-6, 1e-15);
  EXPECT_NEAR(at(g, 1.5, 15).seconds, (15 + 35) / 2.0 * 1e-6, 1e-15);  // bilinear
  EXPECT_FALSE(at(g, 1.5, 15).extrapolated);
}

TEST(OperatorTable, SqrtBlendIsExactForQuadraticGrowth) {
  // Latency ∝ y²: 100 at y = 10, 400 at y = 20; sqrt-space blend gives 225 at 15.
  const OperatorTable t = OperatorTable::parse("dtype,x,y,latency_us\nbf16,1,10,100\nbf16,1,20,400\n", "q.csv", kCols);
  const OperatorGrid g = grid(t, AxisBlend::kSqrt);
  EXPECT_NEAR(at(g, 1, 15).seconds, 225e-6, 1e-15);
  EXPECT_NEAR(at(g, 1, 30).seconds, 900e-6, 1e-15);  // continued in sqrt space: quadratic
  EXPECT_TRUE(at(g, 1, 30).extrapolated);
}

TEST(OperatorTable, AboveTheRangeContinuesTheLastTwoPointsAndIsFlagged) {
  const OperatorGrid g = grid(OperatorTable::parse(kText, "t.csv", kCols));
  const GridLookup l = at(g, 1, 40);
  EXPECT_NEAR(l.seconds, 60e-6, 1e-15);
  EXPECT_TRUE(l.extrapolated);
  // The ragged x = 4 row ends at y = 20: a query at y = 30 continues that row (90 + 40).
  const GridLookup ragged = at(g, 4, 30);
  EXPECT_NEAR(ragged.seconds, 130e-6, 1e-15);
  EXPECT_TRUE(ragged.extrapolated);
  // x beyond 4: along x from x = 2 to 4 at y = 10 (30 → 50): 70 at x = 6.
  EXPECT_NEAR(at(g, 6, 10).seconds, 70e-6, 1e-15);
}

TEST(OperatorTable, BelowTheRangeHoldsTheFirstPoint) {
  const OperatorGrid g = grid(OperatorTable::parse(kText, "t.csv", kCols));
  const GridLookup l = at(g, 1, 5);
  EXPECT_DOUBLE_EQ(l.seconds, 10e-6);
  EXPECT_TRUE(l.extrapolated);
}

TEST(OperatorTable, AFallingLastPairHoldsInsteadOfFalling) {
  const OperatorTable t = OperatorTable::parse("dtype,x,y,latency_us\nbf16,1,10,50\nbf16,1,20,40\n", "f.csv", kCols);
  const OperatorGrid g = grid(t);
  EXPECT_DOUBLE_EQ(at(g, 1, 100).seconds, 40e-6);
}

TEST(OperatorTable, ErrorsNameFileLineAndColumn) {
  try {
    OperatorTable::parse("dtype,x,y,latency_us\nbf16,1,10,abc\n", "bad.csv", kCols);
    FAIL() << "expected ProfileFormatError";
  } catch (const ProfileFormatError& e) {
    EXPECT_EQ(e.file(), "bad.csv");
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.column(), "latency_us");
  }
  try {
    OperatorTable::parse("dtype,x,latency_us\n", "hdr.csv", kCols);
    FAIL() << "expected ProfileFormatError";
  } catch (const ProfileFormatError& e) {
    EXPECT_EQ(e.line(), 1);
    EXPECT_NE(std::string(e.what()).find("dtype,x,y,latency_us"), std::string::npos) << e.what();
  }
  const OperatorTable t = OperatorTable::parse("dtype,x,y,latency_us\nbf16,1,ten,1\n", "num.csv", kCols);
  try {
    grid(t);
    FAIL() << "expected ProfileFormatError";
  } catch (const ProfileFormatError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.column(), "y");
  }
  EXPECT_THROW(OperatorTable::parse("dtype,x,y,latency_us\nbf16,1\n", "short.csv", kCols), ProfileFormatError);
  EXPECT_THROW(OperatorTable::read("/nonexistent/table.csv", kCols), ProfileFormatError);
}

TEST(OperatorTable, ARepeatedShapeIsRefusedNamingBothLines) {
  const OperatorTable t =
      OperatorTable::parse("dtype,x,y,latency_us\nbf16,1,10,1\nbf16,1,10,2\n", "dup.csv", kCols);
  try {
    grid(t);
    FAIL() << "expected ProfileFormatError";
  } catch (const ProfileFormatError& e) {
    EXPECT_EQ(e.line(), 3);
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pagesim::sim

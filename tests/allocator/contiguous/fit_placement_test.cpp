#include "allocator/contiguous/fit_placement.h"

#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <vector>

#include "allocator/allocator_error.h"

namespace pagesim::alloc {

void PrintTo(const SlotRange& r, std::ostream* os) {
  *os << "[" << r.offset << ", " << r.end() << ")";
}

namespace {

using Holes = std::vector<SlotRange>;
using Rule = FitPlacement::Rule;

// Pool of 100 slots with holes [10,30) (20 slots), [40,45) (5) and [55,100) (45):
// A=[0,10) B=[10,30) C=[30,40) D=[40,45) E=[45,55), then B and D released.
void make_three_holes(FitPlacement& p) {
  ASSERT_EQ(p.free_slots(), 100);
  for (std::int64_t n : {10, 20, 10, 5, 10}) EXPECT_TRUE(p.place(n).has_value());
  p.release({10, 20});
  p.release({40, 5});
  EXPECT_EQ(p.free_holes(), (Holes{{10, 20}, {40, 5}, {55, 45}}));
  p.validate();
}

TEST(FitPlacementTest, CarvesFromTheLowEndOfTheOnlyHole) {
  FitPlacement p(100, Rule::kFirstFit);
  EXPECT_EQ(p.place(30), 0);
  EXPECT_EQ(p.place(30), 30);
  EXPECT_EQ(p.free_holes(), (Holes{{60, 40}}));
  EXPECT_EQ(p.free_slots(), 40);
  EXPECT_FALSE(p.place(41).has_value());
  EXPECT_EQ(p.place(40), 60);
  EXPECT_EQ(p.free_slots(), 0);
  EXPECT_TRUE(p.free_holes().empty());
  EXPECT_FALSE(p.can_place(1));
  p.validate();
}

TEST(FitPlacementTest, FirstFitReusesTheLowestHole) {
  FitPlacement p(100, Rule::kFirstFit);
  make_three_holes(p);
  EXPECT_EQ(p.place(5), 10);  // the first hole is large enough, though [40,45) fits exactly
  EXPECT_EQ(p.free_holes(), (Holes{{15, 15}, {40, 5}, {55, 45}}));
  EXPECT_EQ(p.place(16), 55);  // skips holes of 15 and 5
  p.validate();
}

TEST(FitPlacementTest, BestFitPicksTheSmallestSufficientHole) {
  FitPlacement p(100, Rule::kBestFit);
  make_three_holes(p);
  EXPECT_EQ(p.place(5), 40);  // exact fit
  EXPECT_EQ(p.free_holes(), (Holes{{10, 20}, {55, 45}}));
  EXPECT_EQ(p.place(18), 10);  // 20 beats 45
  EXPECT_EQ(p.place(21), 55);
  p.validate();
}

TEST(FitPlacementTest, BestFitBreaksTiesByLowestAddress) {
  FitPlacement p(100, Rule::kBestFit);
  for (std::int64_t n : {10, 10, 10, 10, 10}) EXPECT_TRUE(p.place(n).has_value());
  p.release({30, 10});
  p.release({10, 10});  // holes of 10 at 10 and 30, and 50 at the end
  EXPECT_EQ(p.place(7), 10);
  EXPECT_EQ(p.place(7), 30);
  p.validate();
}

TEST(FitPlacementTest, ReleaseCoalescesWithBothNeighbours) {
  FitPlacement p(100, Rule::kFirstFit);
  for (std::int64_t n : {10, 10, 10, 10}) EXPECT_TRUE(p.place(n).has_value());
  p.release({0, 10});
  p.release({20, 10});
  EXPECT_EQ(p.free_holes(), (Holes{{0, 10}, {20, 10}, {40, 60}}));
  EXPECT_EQ(p.num_holes(), 3);
  p.release({10, 10});  // joins left and right
  EXPECT_EQ(p.free_holes(), (Holes{{0, 30}, {40, 60}}));
  p.release({30, 10});
  EXPECT_EQ(p.free_holes(), (Holes{{0, 100}}));
  EXPECT_EQ(p.num_holes(), 1);
  p.validate();
}

TEST(FitPlacementTest, UnusableFreeCountsHolesShorterThanTheRange) {
  FitPlacement p(100, Rule::kFirstFit);
  make_three_holes(p);  // holes of 20, 5, 45
  EXPECT_EQ(p.free_slots(), 70);
  EXPECT_EQ(p.unusable_free(1), 0);
  EXPECT_EQ(p.unusable_free(5), 0);
  EXPECT_EQ(p.unusable_free(6), 5);
  EXPECT_EQ(p.unusable_free(20), 5);
  EXPECT_EQ(p.unusable_free(21), 25);
  EXPECT_EQ(p.unusable_free(45), 25);
  EXPECT_EQ(p.unusable_free(46), 70);
  EXPECT_EQ(p.unusable_free(1000), 70);
}

TEST(FitPlacementTest, RangeSlotsAreExact) {
  const FitPlacement p(100, Rule::kBestFit);
  EXPECT_EQ(p.range_slots(1), 1);
  EXPECT_EQ(p.range_slots(37), 37);
  EXPECT_EQ(p.max_range_slots(), 100);
  EXPECT_EQ(p.name(), "best_fit");
}

TEST(FitPlacementTest, CheckRangeShapeRejectsRangesOutsideThePool) {
  const FitPlacement p(100, Rule::kFirstFit);
  p.check_range_shape({0, 100});
  p.check_range_shape({99, 1});
  EXPECT_THROW(p.check_range_shape({-1, 5}), InvariantViolation);
  EXPECT_THROW(p.check_range_shape({96, 5}), InvariantViolation);
  EXPECT_THROW(p.check_range_shape({10, 0}), InvariantViolation);
}

TEST(FitPlacementTest, RejectsEmptyPool) {
  EXPECT_THROW(FitPlacement(0, Rule::kFirstFit), AllocatorError);
  EXPECT_THROW(FitPlacement(-5, Rule::kBestFit), AllocatorError);
}

}  // namespace
}  // namespace pagesim::alloc

#include "sim/cost/constant_cost_model.h"

#include <gtest/gtest.h>

#include <limits>

#include "sim/cost/cost_error.h"

namespace pagesim::sim {
namespace {

TEST(CostConstant, FixedCostOnly) {
  const ConstantCostModel m(0.05);
  BatchShape b;
  EXPECT_EQ(m.iteration_seconds(b), 0.0);  // empty batch: no pass
  b.add_decode_seq(10);
  EXPECT_EQ(m.iteration_seconds(b), 0.05);
  b.add_prefill_chunk(1000, 0, true);
  b.add_decode_seq(5000);
  EXPECT_EQ(m.iteration_seconds(b), 0.05);
  EXPECT_EQ(m.swap_seconds(10, 16), 0.0);
}

TEST(CostConstant, LinearTermsAreExact) {
  // Powers of two so that every product and sum is exact in binary floating point.
  const ConstantCostModel m(0.5, 0.25, 0.125, 0.0625);
  BatchShape b;
  b.add_prefill_chunk(8, 4, true);
  b.add_decode_seq(16);
  b.add_decode_seq(32);
  // 0.5 + 0.25·8 + 0.125·2 + 0.0625·48 = 0.5 + 2 + 0.25 + 3
  EXPECT_EQ(m.iteration_seconds(b), 5.75);
}

TEST(CostConstant, SwapPerBlockAndPerToken) {
  const ConstantCostModel m(ConstantCostCoefficients{.seconds_per_iteration = 1,
                                                     .seconds_per_swap_block = 0.5,
                                                     .seconds_per_swap_token = 0.25});
  EXPECT_EQ(m.swap_seconds(0, 16), 0.0);
  EXPECT_EQ(m.swap_seconds(4, 16), 4 * (0.5 + 0.25 * 16));
  EXPECT_NE(m.describe().find("constant("), std::string::npos);
}

TEST(CostConstant, RejectsNegativeOrNonFinite) {
  EXPECT_THROW(ConstantCostModel(-1.0), CostModelError);
  EXPECT_THROW(ConstantCostModel(0.01, std::numeric_limits<double>::quiet_NaN()), CostModelError);
  try {
    ConstantCostModel(ConstantCostCoefficients{.seconds_per_swap_token = -2});
    FAIL();
  } catch (const CostModelError& e) {
    EXPECT_NE(std::string(e.what()).find("seconds_per_swap_token"), std::string::npos);
  }
}

}  // namespace
}  // namespace pagesim::sim

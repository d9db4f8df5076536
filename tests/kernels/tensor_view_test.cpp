#include "kernels/tensor_view.h"

#include <gtest/gtest.h>

#include "kernels/kernel_error.h"

namespace pagesim::kernels {
namespace {

TEST(TensorView, ContiguousHasRowMajorStrides) {
  float x[24];
  const TensorView v = TensorView::contiguous(x, DType::kFloat32, {2, 3, 4});
  EXPECT_EQ(v.rank, 3);
  EXPECT_EQ(v.stride[0], 12);
  EXPECT_EQ(v.stride[1], 4);
  EXPECT_EQ(v.stride[2], 1);
  EXPECT_EQ(v.numel(), 24);
  EXPECT_EQ(v.span_elements(), 24);
  EXPECT_TRUE(v.is_contiguous());
  EXPECT_EQ(v.describe(), "f32[2, 3, 4] strides [12, 4, 1]");
}

TEST(TensorView, StridedViewsAndSpan) {
  float x[64];
  const TensorView v = TensorView::strided(x, DType::kFloat32, {2, 3}, {32, 8});
  EXPECT_FALSE(v.is_contiguous());
  EXPECT_EQ(v.span_elements(), 32 + 2 * 8 + 1);
  const TensorView zero = TensorView::contiguous(x, DType::kFloat32, {0, 5});
  EXPECT_EQ(zero.numel(), 0);
  EXPECT_EQ(zero.span_elements(), 0);
}

TEST(TensorView, EmptyViewMeansAbsent) {
  const TensorView v;
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(v.numel(), 0);
  EXPECT_EQ(v.describe(), "(none)");
}

TEST(TensorView, BadRankThrows) {
  float x[1];
  EXPECT_THROW(TensorView::contiguous(x, DType::kFloat32, {1, 1, 1, 1, 1}), KernelError);
  EXPECT_THROW(TensorView::strided(x, DType::kFloat32, {1, 1}, {1}), KernelError);
}

}  // namespace
}  // namespace pagesim::kernels

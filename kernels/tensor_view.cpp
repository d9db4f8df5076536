#include "kernels/tensor_view.h"

#include <sstream>

#include "kernels/kernel_error.h"

namespace pagesim::kernels {

TensorView TensorView::contiguous(void* data, DType dtype,
                                  std::initializer_list<std::int64_t> shape) {
  if (shape.size() < 1 || shape.size() > static_cast<std::size_t>(kMaxRank)) {
    throw KernelError("TensorView::contiguous: rank " + std::to_string(shape.size()) +
                      " is not in [1, 4]");
  }
  TensorView v;
  v.data = data;
  v.dtype = dtype;
  v.rank = static_cast<int>(shape.size());
  std::size_t i = 0;
  for (std::int64_t s : shape) v.shape[i++] = s;
  std::int64_t running = 1;
  for (int d = v.rank - 1; d >= 0; --d) {
    v.stride[static_cast<std::size_t>(d)] = running;
    running *= v.shape[static_cast<std::size_t>(d)];
  }
  return v;
}

TensorView TensorView::strided(void* data, DType dtype, std::initializer_list<std::int64_t> shape,
                               std::initializer_list<std::int64_t> strides) {
  if (shape.size() != strides.size() || shape.size() < 1 ||
      shape.size() > static_cast<std::size_t>(kMaxRank)) {
    throw KernelError("TensorView::strided: shape has " + std::to_string(shape.size()) +
                      " dims and strides " + std::to_string(strides.size()) +
                      "; expected the same count in [1, 4]");
  }
  TensorView v;
  v.data = data;
  v.dtype = dtype;
  v.rank = static_cast<int>(shape.size());
  std::size_t i = 0;
  for (std::int64_t s : shape) v.shape[i++] = s;
  i = 0;
  for (std::int64_t s : strides) v.stride[i++] = s;
  return v;
}

std::int64_t TensorView::numel() const {
  if (rank == 0) return 0;
  std::int64_t n = 1;
  for (int d = 0; d < rank; ++d) n *= shape[static_cast<std::size_t>(d)];
  return n;
}

bool TensorView::is_contiguous() const {
  std::int64_t running = 1;
  for (int d = rank - 1; d >= 0; --d) {
    const auto i = static_cast<std::size_t>(d);
    if (shape[i] != 1 && stride[i] != running) return false;
    running *= shape[i];
  }
  return true;
}

std::int64_t TensorView::span_elements() const {
  if (rank == 0) return 0;
  std::int64_t last = 0;
  for (int d = 0; d < rank; ++d) {
    const auto i = static_cast<std::size_t>(d);
    if (shape[i] == 0) return 0;
    last += (shape[i] - 1) * stride[i];
  }
  return last + 1;
}

std::string TensorView::describe() const {
  if (empty()) return "(none)";
  std::ostringstream os;
  os << dtype_name(dtype) << '[';
  for (int d = 0; d < rank; ++d) os << (d ? ", " : "") << shape[static_cast<std::size_t>(d)];
  os << "] strides [";
  for (int d = 0; d < rank; ++d) os << (d ? ", " : "") << stride[static_cast<std::size_t>(d)];
  os << ']';
  return os.str();
}

}  // namespace pagesim::kernels

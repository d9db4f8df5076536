// The one place where run-time dtype and head size become template parameters.
//
// dispatch_dtype calls f(Tag<T>{}) with T the CUDA element type (float, __half,
// __nv_bfloat16); dispatch_head_dim calls f(std::integral_constant<int, D>{}) for each D of
// limits::kHeadDims. Anything else throws KernelError naming the value and the list.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <string>
#include <type_traits>

#include "kernels/dtype.h"
#include "kernels/kernel_error.h"
#include "kernels/limits.h"

namespace pagesim::kernels::detail {

template <class T>
struct Tag {
  using type = T;
};

template <class F>
void dispatch_dtype(DType t, const char* fn, F&& f) {
  switch (t) {
    case DType::kFloat32: f(Tag<float>{}); return;
    case DType::kFloat16: f(Tag<__half>{}); return;
    case DType::kBFloat16: f(Tag<__nv_bfloat16>{}); return;
    default: break;
  }
  throw KernelError(std::string(fn) + ": dtype " + dtype_name(t) +
                    " is not supported; expected f32, f16 or bf16");
}

template <class F>
void dispatch_head_dim(int d, const char* fn, F&& f) {
  static_assert(limits::kHeadDims.size() == 6, "update the switch below with limits::kHeadDims");
  switch (d) {
    case 64: f(std::integral_constant<int, 64>{}); return;
    case 80: f(std::integral_constant<int, 80>{}); return;
    case 96: f(std::integral_constant<int, 96>{}); return;
    case 112: f(std::integral_constant<int, 112>{}); return;
    case 128: f(std::integral_constant<int, 128>{}); return;
    case 256: f(std::integral_constant<int, 256>{}); return;
    default: break;
  }
  throw KernelError(std::string(fn) + ": head_dim " + std::to_string(d) +
                    " is not supported; expected one of 64, 80, 96, 112, 128, 256");
}

}  // namespace pagesim::kernels::detail

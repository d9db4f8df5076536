// The wgmma wrappers (kernels/cuda/wgmma.cuh) against a CPU product, on one warpgroup: the
// two products of the Hopper prefill kernel, S = Q K^T with both operands K-major in
// 128-byte-swizzled shared memory, and O = P V with P in registers (accumulator layout) and
// V N-major. Pins the layout facts the kernel relies on, so a wrong descriptor fails here
// with a plain message rather than as a wrong attention output. Skips where no compute
// capability 9.0 device is present or the build has no sm_90a code.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gpu_requirement.h"
#include "kernels/cuda/cuda_host.h"
#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/prefill_params.h"
#include "kernels/cuda/wgmma.cuh"

namespace pagesim::kernels {
namespace {

constexpr int kM = 64, kN = 128, kK = 128;  // S: 64 x 128 over 128; O: 64 x 128 over 128 keys

__global__ void wgmma_available_kernel(int* out) { *out = PAGESIM_WGMMA_AVAILABLE; }

// q [64][128], k [128][128], v [128][128] row-major (v: rows are keys); p [64][128] (rows x
// keys). s_out, o_out [64][128] fp32 row-major. v_leading / v_stride: V's descriptor strides.
__global__ void __launch_bounds__(128) wgmma_products_kernel(const __half* q, const __half* k, const __half* v,
                                                             const __half* p, float* s_out, float* o_out,
                                                             std::uint32_t v_leading, std::uint32_t v_stride) {
  extern __shared__ __align__(1024) unsigned char raw[];
  unsigned char* base = raw + ((1024u - (detail::smem_addr(raw) & 1023u)) & 1023u);
  unsigned char* sq = base;
  unsigned char* sk = sq + kM * kK * 2;
  unsigned char* sv = sk + kN * kK * 2;
  const int tid = static_cast<int>(threadIdx.x);
  for (int i = tid; i < kM * 16; i += 128) {
    *reinterpret_cast<uint4*>(sq + detail::sw128_offset(i / 16, i % 16, kM)) = reinterpret_cast<const uint4*>(q)[i];
  }
  for (int i = tid; i < kN * 16; i += 128) {
    *reinterpret_cast<uint4*>(sk + detail::sw128_offset(i / 16, i % 16, kN)) = reinterpret_cast<const uint4*>(k)[i];
    *reinterpret_cast<uint4*>(sv + detail::sw128_offset(i / 16, i % 16, kN)) = reinterpret_cast<const uint4*>(v)[i];
  }
  detail::fence_proxy_async_shared();
  __syncthreads();
  const int warp = tid / 32, lane = tid % 32;
  float s[64];
  detail::wgmma_fence();
  for (int kk = 0; kk < kK / 16; ++kk) {
    const std::uint32_t step = (kk % 4) * 32;
    const std::uint64_t a = detail::wgmma_desc_sw128(detail::smem_addr(sq) + (kk / 4) * kM * 128 + step, 16, 1024);
    const std::uint64_t b = detail::wgmma_desc_sw128(detail::smem_addr(sk) + (kk / 4) * kN * 128 + step, 16, 1024);
    detail::wgmma_m64n128k16_ss<__half>(s, a, b, kk > 0);
  }
  detail::wgmma_commit();
  detail::wgmma_wait<0>(s);
  // P fragments straight from p (the A-fragment layout of this warp's 16 rows).
  const int r = warp * 16 + lane / 4;
  const int c = (lane % 4) * 2;
  auto pk = [&](int row, int col) {
    __half2 h = __halves2half2(p[row * kN + col], p[row * kN + col + 1]);
    return *reinterpret_cast<std::uint32_t*>(&h);
  };
  float o[64];
  for (int i = 0; i < 64; ++i) o[i] = 0.f;
  detail::wgmma_fence();
  for (int kt = 0; kt < kN / 16; ++kt) {
    const std::uint32_t a[4] = {pk(r, 16 * kt + c), pk(r + 8, 16 * kt + c), pk(r, 16 * kt + 8 + c),
                                pk(r + 8, 16 * kt + 8 + c)};
    const std::uint64_t b = detail::wgmma_desc_sw128(detail::smem_addr(sv) + kt * 16 * 128, v_leading, v_stride);
    detail::wgmma_m64n128k16_rs_tb<__half>(o, a, b);
  }
  detail::wgmma_commit();
  detail::wgmma_wait<0>(o);
  for (int nt = 0; nt < 16; ++nt) {
    for (int x = 0; x < 4; ++x) {
      const int row = r + 8 * (x / 2), col = nt * 8 + c + x % 2;
      s_out[row * kN + col] = s[nt * 4 + x];
      o_out[row * kN + col] = o[nt * 4 + x];
    }
  }
}

bool wgmma_runs(std::string* why) {
  if (!cuda_device_available(why)) return false;
  if (!detail::device_runs_wgmma()) {  // the launcher's own test
    *why = "wgmma needs a compute capability 9.0 device and kernels built with sm_90a";
    return false;
  }
  DeviceBuffer flag(sizeof(int));  // and this test's own code has it too
  wgmma_available_kernel<<<1, 1>>>(reinterpret_cast<int*>(flag.get()));
  check_cuda(cudaGetLastError(), "test", "wgmma_available_kernel");
  int have = 0;
  flag.download(&have, sizeof(int));
  if (!have) *why = "this build has no sm_90a code (CMAKE_CUDA_ARCHITECTURES without 90a)";
  return have != 0;
}

// Largest |got - want| over the matrix, and where.
std::string max_error(const std::vector<float>& got, const std::vector<float>& want, double* err) {
  *err = 0;
  std::size_t at = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double e = std::abs(static_cast<double>(got[i]) - want[i]);
    if (!(e <= *err)) *err = e, at = i;
  }
  return "max error " + std::to_string(*err) + " at row " + std::to_string(at / kN) + " col " +
         std::to_string(at % kN) + " (got " + std::to_string(got[at]) + ", want " + std::to_string(want[at]) + ")";
}

TEST(WgmmaGpu, SwizzledProductsMatchTheCpu) {
  std::string why;
  if (!wgmma_runs(&why)) {
    if (testing::no_gpu_action(std::getenv(testing::kRequireGpuEnv)) == testing::NoGpuAction::kFail) {
      FAIL() << "PAGESIM_REQUIRE_GPU is set but " << why;
    }
    GTEST_SKIP() << why;
  }
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  auto make = [&](int n, std::vector<__half>& h, std::vector<float>& f) {
    h.resize(static_cast<std::size_t>(n));
    f.resize(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      h[static_cast<std::size_t>(i)] = __float2half(u(rng));
      f[static_cast<std::size_t>(i)] = __half2float(h[static_cast<std::size_t>(i)]);
    }
  };
  std::vector<__half> hq, hk, hv, hp;
  std::vector<float> fq, fk, fv, fp;
  make(kM * kK, hq, fq);
  make(kN * kK, hk, fk);
  make(kN * kK, hv, fv);
  make(kM * kN, hp, fp);
  std::vector<float> want_s(kM * kN, 0.f), want_o(kM * kN, 0.f);
  for (int i = 0; i < kM; ++i) {
    for (int j = 0; j < kN; ++j) {
      double s = 0, o = 0;
      for (int x = 0; x < kK; ++x) s += static_cast<double>(fq[i * kK + x]) * fk[j * kK + x];
      for (int x = 0; x < kN; ++x) o += static_cast<double>(fp[i * kN + x]) * fv[x * kK + j];
      want_s[static_cast<std::size_t>(i * kN + j)] = static_cast<float>(s);
      want_o[static_cast<std::size_t>(i * kN + j)] = static_cast<float>(o);
    }
  }
  auto upload = [](const std::vector<__half>& h) {
    DeviceBuffer b(h.size() * 2);
    b.upload(h.data(), h.size() * 2);
    return b;
  };
  DeviceBuffer dq = upload(hq), dk = upload(hk), dv = upload(hv), dp = upload(hp);
  DeviceBuffer ds(kM * kN * 4), dout(kM * kN * 4);
  const int smem = 1024 + (kM + 2 * kN) * kK * 2;
  check_cuda(cudaFuncSetAttribute(wgmma_products_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
                     "test", "cudaFuncSetAttribute");
  // V's strides as the kernel sets them (leading: between 64-column atoms, kN rows apart;
  // stride: between 8-row groups), then swapped, to say which one a failure needs.
  auto run = [&](std::uint32_t leading, std::uint32_t stride, std::vector<float>& s, std::vector<float>& o) {
    wgmma_products_kernel<<<1, 128, smem>>>(reinterpret_cast<const __half*>(dq.get()), reinterpret_cast<const __half*>(dk.get()),
                                            reinterpret_cast<const __half*>(dv.get()), reinterpret_cast<const __half*>(dp.get()),
                                            reinterpret_cast<float*>(ds.get()), reinterpret_cast<float*>(dout.get()), leading,
                                            stride);
    check_cuda(cudaGetLastError(), "test", "wgmma_products_kernel");
    check_cuda(cudaDeviceSynchronize(), "test", "wgmma_products_kernel");
    s.resize(kM * kN);
    o.resize(kM * kN);
    ds.download(s.data(), s.size() * 4);
    dout.download(o.data(), o.size() * 4);
  };
  std::vector<float> s, o;
  run(kN * 128, 1024, s, o);
  double es = 0, eo = 0;
  const std::string ms = max_error(s, want_s, &es), mo = max_error(o, want_o, &eo);
  EXPECT_LT(es, 0.02) << "S = Q K^T (K-major operands): " << ms;
  if (!(eo < 0.02)) {
    std::vector<float> s2, o2;
    run(1024, kN * 128, s2, o2);
    double e2 = 0;
    const std::string m2 = max_error(o2, want_o, &e2);
    ADD_FAILURE() << "O = P V (V N-major, leading " << kN * 128 << ", stride 1024): " << mo
                  << "; with leading and stride swapped: " << m2;
  }
}

}  // namespace
}  // namespace pagesim::kernels

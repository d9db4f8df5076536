// Hopper warpgroup MMA (wgmma, sm_90a): shared-memory matrix descriptors, the fences that
// order it, and the m64n128k16 shapes the Hopper prefill kernel issues. Device code only;
// the instructions exist only when compiling for sm_90a (__CUDA_ARCH_FEAT_SM90_ALL), and
// every wrapper traps elsewhere, so host code must not launch a caller on other targets.
//
// Layout facts used here (PTX ISA, "Asynchronous Warpgroup Level Matrix Shared Memory
// Layout" and "Matrix Descriptor Format"):
//  - descriptor bits: start address >> 4 in [0, 14), leading byte offset >> 4 in [16, 30),
//    stride byte offset >> 4 in [32, 46), swizzle mode in [62, 64) (1 = 128-byte swizzle);
//  - 128-byte swizzle: rows of 128 bytes (64 16-bit elements), the 16-byte chunk c of row r
//    stored at chunk c ^ (r % 8), atoms of 8 rows (1024 bytes) aligned to 1024 bytes;
//  - K-major operand (rows = M or N, 64 K-elements per row): the stride byte offset is the
//    distance between 8-row groups; the leading offset is unused; a k16 step inside the
//    atom moves the start address by 32 bytes;
//  - MN-major operand (rows = K, 64 N-elements per row; imm-trans-b = 1): the leading byte
//    offset is the distance between 64-element column atoms, the stride byte offset the
//    distance between 8-row groups along K.
// The accumulator of m64nNk16 gives warp w of the warpgroup rows 16w .. 16w + 15 in the
// layout of mma.sync m16n8k16 repeated over N / 8 column tiles: d[4n + c] is row
// lane / 4 + 8 (c / 2), column 8n + 2 (lane % 4) + c % 2. The register A operand is laid out
// as mma.sync's A fragment for the same warp rows.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace pagesim::kernels::detail {

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define PAGESIM_WGMMA_AVAILABLE 1
#else
#define PAGESIM_WGMMA_AVAILABLE 0
#endif

// Descriptor of a 128-byte-swizzled operand whose atoms start at `smem` (a shared-memory
// address, 1024-byte aligned for the atom; k-steps add 32 bytes to it).
__device__ __forceinline__ std::uint64_t wgmma_desc_sw128(std::uint32_t smem, std::uint32_t leading_bytes,
                                                          std::uint32_t stride_bytes) {
  std::uint64_t d = (smem & 0x3FFFFu) >> 4;
  d |= static_cast<std::uint64_t>((leading_bytes >> 4) & 0x3FFFu) << 16;
  d |= static_cast<std::uint64_t>((stride_bytes >> 4) & 0x3FFFu) << 32;
  d |= static_cast<std::uint64_t>(1) << 62;  // 128-byte swizzle
  return d;
}

// Byte offset of 16-byte chunk c (8 elements) of `row` in a 16-bit tile of `rows` rows
// stored as 128-byte-swizzled column atoms: atom c / 8 holds columns 64 (c / 8) .. + 63 of
// every row and starts rows x 128 bytes after the previous one. The tile starts 1024-byte
// aligned.
__host__ __device__ __forceinline__ std::uint32_t sw128_offset(int row, int c, int rows) {
  return static_cast<std::uint32_t>((c / 8) * rows * 128 + row * 128 + (((c % 8) ^ (row % 8)) << 4));
}

// Orders this thread's generic-proxy shared-memory writes (st.shared, cp.async) before the
// async proxy (wgmma operand reads) after the next barrier.
__device__ __forceinline__ void fence_proxy_async_shared() {
#if PAGESIM_WGMMA_AVAILABLE
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#else
  __trap();
#endif
}

// Before the first wgmma of a batch: earlier register writes of accumulators and A
// fragments are visible to it.
__device__ __forceinline__ void wgmma_fence() {
#if PAGESIM_WGMMA_AVAILABLE
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#else
  __trap();
#endif
}
__device__ __forceinline__ void wgmma_commit() {
#if PAGESIM_WGMMA_AVAILABLE
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#else
  __trap();
#endif
}
// The 64 accumulator operands %0 .. %63 of an m64n128 wgmma, as a PTX list and as asm operands.
#define PAGESIM_WGMMA_D64 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"
#define PAGESIM_WGMMA_D64_OPS(d) \
  "+f"((d)[0]), "+f"((d)[1]), "+f"((d)[2]), "+f"((d)[3]), "+f"((d)[4]), "+f"((d)[5]), "+f"((d)[6]), "+f"((d)[7]), \
  "+f"((d)[8]), "+f"((d)[9]), "+f"((d)[10]), "+f"((d)[11]), "+f"((d)[12]), "+f"((d)[13]), "+f"((d)[14]), "+f"((d)[15]), \
  "+f"((d)[16]), "+f"((d)[17]), "+f"((d)[18]), "+f"((d)[19]), "+f"((d)[20]), "+f"((d)[21]), "+f"((d)[22]), "+f"((d)[23]), \
  "+f"((d)[24]), "+f"((d)[25]), "+f"((d)[26]), "+f"((d)[27]), "+f"((d)[28]), "+f"((d)[29]), "+f"((d)[30]), "+f"((d)[31]), \
  "+f"((d)[32]), "+f"((d)[33]), "+f"((d)[34]), "+f"((d)[35]), "+f"((d)[36]), "+f"((d)[37]), "+f"((d)[38]), "+f"((d)[39]), \
  "+f"((d)[40]), "+f"((d)[41]), "+f"((d)[42]), "+f"((d)[43]), "+f"((d)[44]), "+f"((d)[45]), "+f"((d)[46]), "+f"((d)[47]), \
  "+f"((d)[48]), "+f"((d)[49]), "+f"((d)[50]), "+f"((d)[51]), "+f"((d)[52]), "+f"((d)[53]), "+f"((d)[54]), "+f"((d)[55]), \
  "+f"((d)[56]), "+f"((d)[57]), "+f"((d)[58]), "+f"((d)[59]), "+f"((d)[60]), "+f"((d)[61]), "+f"((d)[62]), "+f"((d)[63])

// Waits until at most N committed batches are pending. `d` is named so the compiler keeps
// the accumulators' registers untouched until then.
template <int N>
__device__ __forceinline__ void wgmma_wait(float (&d)[64]) {
#if PAGESIM_WGMMA_AVAILABLE
  asm volatile("wgmma.wait_group.sync.aligned %64;\n"
               : PAGESIM_WGMMA_D64_OPS(d)
               : "n"(N)
               : "memory");
#else
  (void)d;
  __trap();
#endif
}

// The m64n128k16 products for one operand type TY ("f16" or "bf16"), fp32 accumulators.
// SS: A and B descriptors, %66 != 0 accumulates. RS_TB: A in registers, B N-major.
#define PAGESIM_WGMMA_SS(TY)                                                                              \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                                              \
               "wgmma.mma_async.sync.aligned.m64n128k16.f32." TY "." TY " " PAGESIM_WGMMA_D64             \
               ", %64, %65, p, 1, 1, 0, 0;\n}\n"                                                         \
               : PAGESIM_WGMMA_D64_OPS(d)                                                                 \
               : "l"(a_desc), "l"(b_desc), "r"(static_cast<int>(accumulate)))
#define PAGESIM_WGMMA_RS_TB(TY)                                                                           \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"                                              \
               "wgmma.mma_async.sync.aligned.m64n128k16.f32." TY "." TY " " PAGESIM_WGMMA_D64             \
               ", {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n"                                           \
               : PAGESIM_WGMMA_D64_OPS(d)                                                                 \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(1))

// d (+)= A B for A (64 x 16) and B (16 x 128) both K-major in shared memory;
// accumulate = false overwrites d.
template <class T>
__device__ __forceinline__ void wgmma_m64n128k16_ss(float (&d)[64], std::uint64_t a_desc, std::uint64_t b_desc,
                                                    bool accumulate) {
  static_assert(std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>, "16-bit operands");
#if PAGESIM_WGMMA_AVAILABLE
  if constexpr (std::is_same_v<T, __half>) {
    PAGESIM_WGMMA_SS("f16");
  } else {
    PAGESIM_WGMMA_SS("bf16");
  }
#else
  (void)d, (void)a_desc, (void)b_desc, (void)accumulate;
  __trap();
#endif
}

// d += A B for A (64 x 16) in registers (mma.sync A-fragment layout per warp) and B
// (16 x 128) N-major in shared memory.
template <class T>
__device__ __forceinline__ void wgmma_m64n128k16_rs_tb(float (&d)[64], const std::uint32_t (&a)[4],
                                                       std::uint64_t b_desc) {
  static_assert(std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>, "16-bit operands");
#if PAGESIM_WGMMA_AVAILABLE
  if constexpr (std::is_same_v<T, __half>) {
    PAGESIM_WGMMA_RS_TB("f16");
  } else {
    PAGESIM_WGMMA_RS_TB("bf16");
  }
#else
  (void)d, (void)a, (void)b_desc;
  __trap();
#endif
}

#undef PAGESIM_WGMMA_SS
#undef PAGESIM_WGMMA_RS_TB
#undef PAGESIM_WGMMA_D64
#undef PAGESIM_WGMMA_D64_OPS

}  // namespace pagesim::kernels::detail

// The Validator's backend seam: PagedAttentionBackends hands out the backend of a device or
// says which is missing, the CPU backend is the reference for any geometry, and a Validator
// computes through exactly the backend it is given — its refusals, its output dtype and its
// output (a backend that corrupts one element is caught at that element).
#include "sim/validate/paged_attention_backend.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "kernels/reference_attention.h"
#include "kernels/reference_latent_attention.h"
#include "sim/validate/cpu_paged_attention.h"
#include "sim/validate/validator.h"
#include "validate_test_support.h"

namespace pagesim::sim {
namespace {

using testing::correct_batch;
using testing::header;

// A stand-in for the CUDA backend: the CPU reference, then (if asked) one output element
// moved by `delta`; it records what the Validator asked of it.
class FakeCudaBackend final : public PagedAttentionBackend {
 public:
  ValidateDevice device() const override { return ValidateDevice::kCuda; }
  void check_supported(std::int32_t block_size, std::int32_t head_dim) const override {
    asked_block_size = block_size;
    asked_head_dim = head_dim;
    if (!refusal.empty()) throw ValidateError(refusal);
  }
  kernels::DType output_dtype(kernels::DType /*input*/) const override { return kernels::DType::kFloat32; }
  void run(const kernels::PagedAttentionArgs& args, std::int32_t max_query_len) const override {
    ++runs;
    last_max_query_len = max_query_len;
    kernels::reference_paged_attention(args);
    if (corrupt_element >= 0) args.out.as<float>()[corrupt_element] += delta;
  }
  void check_supported_latent(std::int32_t block_size, std::int32_t /*latent_dim*/, std::int32_t /*value_dim*/,
                              kernels::DType /*query*/, kernels::DType /*cache*/) const override {
    asked_block_size = block_size;
    if (!refusal.empty()) throw ValidateError(refusal);
  }
  void run_latent(const kernels::LatentAttentionArgs& args, std::int32_t max_query_len) const override {
    ++runs;
    last_max_query_len = max_query_len;
    kernels::reference_latent_attention(args);
    if (corrupt_element >= 0) args.out.as<float>()[corrupt_element] += delta;
  }

  std::string refusal;              // non-empty: check_supported throws it
  std::int64_t corrupt_element = -1;
  float delta = 0;
  mutable std::int32_t asked_block_size = -1;
  mutable std::int32_t asked_head_dim = -1;
  mutable std::int32_t last_max_query_len = -1;
  mutable int runs = 0;
};

ValidatorSettings on_cuda() {
  ValidatorSettings s;
  s.device = ValidateDevice::kCuda;
  return s;
}

TEST(ValidateBackend, GetReturnsTheBackendOfTheDevice) {
  const CpuPagedAttention cpu;
  const FakeCudaBackend cuda;
  const PagedAttentionBackends both{.cpu = &cpu, .cuda = &cuda};
  EXPECT_EQ(&both.get(ValidateDevice::kCpu), &cpu);
  EXPECT_EQ(&both.get(ValidateDevice::kCuda), &cuda);
}

TEST(ValidateBackend, MissingBackendsAreNamed) {
  const CpuPagedAttention cpu;
  const PagedAttentionBackends cpu_only{.cpu = &cpu, .cuda = nullptr};
  try {
    cpu_only.get(ValidateDevice::kCuda);
    FAIL() << "no CUDA backend: expected a ValidateError";
  } catch (const ValidateError& e) {
    EXPECT_EQ(std::string(e.what()),
              "device cuda: this pagesim was built without CUDA (nvcc not found or PAGESIM_ENABLE_CUDA=OFF); "
              "use --device cpu");
  }
  const PagedAttentionBackends none;
  try {
    none.get(ValidateDevice::kCpu);
    FAIL() << "no CPU backend: expected a ValidateError";
  } catch (const ValidateError& e) {
    EXPECT_NE(std::string(e.what()).find("device cpu"), std::string::npos) << e.what();
  }
}

TEST(ValidateBackend, CpuBackendTakesAnyGeometryAndWritesF32) {
  const CpuPagedAttention cpu;
  EXPECT_EQ(cpu.device(), ValidateDevice::kCpu);
  EXPECT_NO_THROW(cpu.check_supported(1, 1));
  EXPECT_NO_THROW(cpu.check_supported(12, 40));  // neither is a CUDA kernel size
  for (const kernels::DType t : {kernels::DType::kFloat32, kernels::DType::kFloat16, kernels::DType::kBFloat16}) {
    EXPECT_EQ(cpu.output_dtype(t), kernels::DType::kFloat32);
  }
}

TEST(ValidateBackend, ValidatorAsksAndRunsTheBackendOfItsDevice) {
  const CpuPagedAttention cpu;
  const FakeCudaBackend cuda;
  ValidatorSettings s = on_cuda();
  s.head_dim = 32;
  const Validator v(s, header(8, 64), PagedAttentionBackends{.cpu = &cpu, .cuda = &cuda});
  EXPECT_EQ(cuda.asked_block_size, 8);
  EXPECT_EQ(cuda.asked_head_dim, 32);
  // The CUDA device's default tolerance, whichever backend stands behind it.
  EXPECT_EQ(v.tolerance().atol, default_tolerance(ValidateDevice::kCuda, kernels::DType::kFloat32).atol);
  SampledBatch b;
  b.sequences.push_back(testing::make_seq(1, 0, {0, 1}, {{"p1", 0, 12}}, 3));
  const BatchCheck c = v.check(b, 0);
  EXPECT_TRUE(c.passed) << c.error;
  EXPECT_EQ(cuda.runs, 1);
  EXPECT_EQ(cuda.last_max_query_len, 3);
}

TEST(ValidateBackend, ABackendsWrongElementIsCaughtThere) {
  const CpuPagedAttention cpu;
  FakeCudaBackend cuda;
  // Query row 2 (each of the four sequences has one decode query: row 2 is request 3 seq 0),
  // head 3, element 5.
  const ValidatorSettings s = on_cuda();
  cuda.corrupt_element = (2 * s.num_q_heads + 3) * s.head_dim + 5;
  cuda.delta = 0.5f;
  const Validator v(s, header(), PagedAttentionBackends{.cpu = &cpu, .cuda = &cuda});
  const BatchCheck c = v.check(correct_batch(), 0);
  EXPECT_FALSE(c.passed);
  EXPECT_TRUE(c.error.empty()) << c.error;
  EXPECT_EQ(c.violations, 1);
  EXPECT_NEAR(c.max_abs_error, 0.5, 1e-6);
  EXPECT_EQ(c.worst_sequence, 2);
  EXPECT_EQ(c.worst_request, 3u);
  EXPECT_EQ(c.worst_seq, 0u);
  EXPECT_EQ(c.worst_q_head, 3);
}

TEST(ValidateBackend, RefusalsComeAfterTheValidatorsOwnChecks) {
  const CpuPagedAttention cpu;
  FakeCudaBackend cuda;
  cuda.refusal = "device cuda: refused by the test backend";
  const PagedAttentionBackends backends{.cpu = &cpu, .cuda = &cuda};
  try {
    Validator v(on_cuda(), header(), backends);
    FAIL() << "expected the backend's refusal";
  } catch (const ValidateError& e) {
    EXPECT_EQ(std::string(e.what()), cuda.refusal);
  }
  ValidatorSettings bad = on_cuda();
  bad.num_kv_heads = 3;
  cuda.asked_block_size = -1;
  try {
    Validator v(bad, header(), backends);
    FAIL() << "expected the heads refusal";
  } catch (const ValidateError& e) {
    EXPECT_NE(std::string(e.what()).find("multiple of num_kv_heads (3)"), std::string::npos) << e.what();
  }
  EXPECT_EQ(cuda.asked_block_size, -1) << "the backend is asked only once the settings are valid";
}

// A latent (MLA) header: rows of 24 elements, the first 16 the value (the CPU path takes any).
BatchFileHeader latent_header() {
  BatchFileHeader h = header();
  h.latent_dim = 24;
  h.value_dim = 16;
  return h;
}

TEST(ValidateLatent, ALatentFileRunsTheLatentKernelAndPassesInEveryDtype) {
  const CpuPagedAttention cpu;
  const FakeCudaBackend cuda;
  const PagedAttentionBackends backends{.cpu = &cpu, .cuda = &cuda};
  for (const kernels::DType t : {kernels::DType::kFloat32, kernels::DType::kBFloat16, kernels::DType::kFloat8E4M3}) {
    ValidatorSettings s = on_cuda();
    s.dtype = t;
    const Validator v(s, latent_header(), backends);
    const BatchCheck c = v.check(correct_batch(), 0);
    EXPECT_TRUE(c.passed) << kernels::dtype_name(t) << ": " << c.error << " max err " << c.max_abs_error;
    EXPECT_GT(c.max_abs_ref, 0.0);
  }
  EXPECT_EQ(cuda.runs, 3);
  SampledBatch chunk;
  chunk.sequences.push_back(testing::make_seq(1, 0, {0, 1}, {{"p1", 0, 7}}, 3));
  ValidatorSettings cpu_settings;
  cpu_settings.dtype = kernels::DType::kFloat8E4M3;
  const BatchCheck c = Validator(cpu_settings, latent_header(), backends).check(chunk, 0);
  EXPECT_TRUE(c.passed) << c.error;
}

TEST(ValidateLatent, AWrongValueElementIsCaught) {
  const CpuPagedAttention cpu;
  FakeCudaBackend cuda;
  const ValidatorSettings s = on_cuda();
  // Row 2, head 3, value element 5 of 16.
  cuda.corrupt_element = (2 * s.num_q_heads + 3) * 16 + 5;
  cuda.delta = 0.25f;
  const Validator v(s, latent_header(), PagedAttentionBackends{.cpu = &cpu, .cuda = &cuda});
  const BatchCheck c = v.check(correct_batch(), 0);
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.violations, 1);
  EXPECT_NEAR(c.max_abs_error, 0.25, 1e-6);
  EXPECT_EQ(c.worst_request, 3u);
  EXPECT_EQ(c.worst_q_head, 3);
}

TEST(ValidateLatent, ABrokenBlockTableFailsTheLatentCheck) {
  const CpuPagedAttention cpu;
  const PagedAttentionBackends backends{.cpu = &cpu, .cuda = nullptr};
  SampledBatch b = correct_batch();
  b.sequences[2].block_table[1] = b.sequences[3].block_table[1];  // seq 0 reads seq 1's block
  ValidatorSettings s;
  s.atol = 1e-6;
  const BatchCheck c = Validator(s, latent_header(), backends).check(b, 0);
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.worst_request, 3u);
}

TEST(ValidateLatent, Fp8IsALatentCachesDtypeOnly) {
  const CpuPagedAttention cpu;
  const PagedAttentionBackends backends{.cpu = &cpu, .cuda = nullptr};
  ValidatorSettings s;
  s.dtype = kernels::DType::kFloat8E4M3;
  try {
    Validator v(s, header(), backends);
    FAIL() << "fp8 accepted for standard attention";
  } catch (const ValidateError& e) {
    EXPECT_NE(std::string(e.what()).find("latent"), std::string::npos) << e.what();
  }
  EXPECT_EQ(parse_kv_dtype("fp8", "--dtype"), kernels::DType::kFloat8E4M3);
}

}  // namespace
}  // namespace pagesim::sim

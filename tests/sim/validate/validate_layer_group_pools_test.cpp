// `pagesim validate` on the layer-group pools: a short gpt-oss-120b run (sliding window of 128
// tokens in half its layers) under hybrid and jenga samples its batches in the window table —
// the header names the mask, and the tables hold freed (-1) entries behind the window — and
// under vattention in its contiguous virtual view; the CPU paged-attention reference must
// reproduce dense (windowed) attention on every batch.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "sim/experiment/experiment.h"
#include "sim/validate/cpu_paged_attention.h"
#include "sim/validate/sampled_batch.h"
#include "sim/validate/validate_command.h"

namespace pagesim::sim {
namespace {

namespace fs = std::filesystem;

class ValidateLayerGroupPools : public ::testing::TestWithParam<const char*> {
 protected:
  fs::path dir_ = fs::temp_directory_path() / ("pagesim-validate-pools-" + std::to_string(getpid()) + "-" + GetParam());
  void TearDown() override { fs::remove_all(dir_); }

  // Prompts of 100..600 tokens, outputs up to 200, chunked prefill of 256 tokens: windows are
  // crossed in prefill chunks and in decode.
  fs::path simulate() {
    fs::create_directories(dir_);
    std::ofstream(dir_ / "exp.yaml") << "name: validate-pools\n"
                                        "seed: 5\n"
                                        "workload:\n"
                                        "  kind: synthetic\n"
                                        "  arrival: {kind: poisson, rate: 8.0}\n"
                                        "  lengths: {prompt: {kind: uniform, lo: 100, hi: 600}, "
                                        "output: {kind: uniform, lo: 1, hi: 200}}\n"
                                        "  max_requests: 40\n"
                                        "model: gpt-oss-120b\n"
                                        "gpu: h200\n"
                                        "max_model_len: 1024\n"
                                        "kv: {slots: 8192}\n"
                                        "allocator: {kind: " << GetParam() << ", block_size: 16"
                                     << (std::string(GetParam()) == "vattention" ? ", vattention: {max_batch_size: 32}" : "")
                                     << "}\n"
                                        "scheduler: {kind: vllm-v1, max_num_batched_tokens: 256}\n"
                                        "output: {iterations_stride: 0, requests_csv: false}\n"
                                        "validate: {every_n_iterations: 9, max_batches: 8}\n";
    run_experiment_file((dir_ / "exp.yaml").string(), {}, dir_ / "out");
    return dir_ / "out" / "batches.jsonl";
  }
};

TEST_P(ValidateLayerGroupPools, ReferenceMatchesDenseAttentionOnEverySampledBatch) {
  const fs::path batches = simulate();
  const BatchFile f = read_batch_file(batches);
  ASSERT_EQ(f.batches.size(), 8u);
  const std::string kind = GetParam();
  bool freed = false;
  for (const SampledBatch& b : f.batches)
    for (const SampledSequence& s : b.sequences)
      for (std::int32_t id : s.block_table) freed |= id == -1;
  if (kind == "vattention") {
    EXPECT_EQ(f.header.block_size, 1);
    EXPECT_EQ(f.header.num_blocks, 32 * 1024);  // max_batch_size rows of max_model_len tokens
    EXPECT_TRUE(f.header.mask.causal());
    EXPECT_FALSE(freed);
  } else {
    EXPECT_EQ(f.header.mask.kind, kernels::MaskKind::kSlidingWindow);
    EXPECT_EQ(f.header.mask.window, 128);
    EXPECT_TRUE(freed) << "no sampled sequence had pages behind its window freed";
  }
  ValidateOptions o;
  o.file = batches;
  std::ostringstream out, err;
  const CpuPagedAttention cpu;
  EXPECT_EQ(run_validate_command(o, PagedAttentionBackends{.cpu = &cpu, .cuda = nullptr}, out, err), 0)
      << out.str() << err.str();
  EXPECT_NE(out.str().find("8 of 8 batches pass"), std::string::npos) << out.str() << err.str();
}

INSTANTIATE_TEST_SUITE_P(Pools, ValidateLayerGroupPools, ::testing::Values("hybrid", "jenga", "vattention"));

}  // namespace
}  // namespace pagesim::sim

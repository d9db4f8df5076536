// vllm-v1 (and orca) over each layer-group pool — uniform, hybrid, jenga, vattention — on
// random workloads in pools small enough to preempt, for a Gemma-like model (full + sliding
// window) and an mllama-like one (full + cross-attention, every request carrying encoder
// tokens): the scheduler's and the allocator's invariants (their validate()) hold after every
// iteration, and every request finishes.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "allocator/make_allocator.h"
#include "sim_harness.h"

namespace pagesim::sim {
namespace {

using alloc::LayerGroup;
using alloc::LayerGroupKind;

// Per-layer KV of 64 bytes per token in every attending group (hybrid needs one page size).
alloc::LayerGroups gemma_like() {
  return {LayerGroup{.kind = LayerGroupKind::kSlidingWindow, .layers = 3, .kv_bytes_per_token = 3 * 64,
                     .window_tokens = 24},
          LayerGroup{.kind = LayerGroupKind::kFull, .layers = 3, .kv_bytes_per_token = 3 * 64}};
}
alloc::LayerGroups mllama_like() {
  return {LayerGroup{.kind = LayerGroupKind::kFull, .layers = 4, .kv_bytes_per_token = 4 * 64},
          LayerGroup{.kind = LayerGroupKind::kCrossAttention, .layers = 2, .kv_bytes_per_token = 2 * 64,
                     .encoder_tokens = 20}};
}

std::vector<traces::TraceRequest> workload(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<traces::TraceRequest> out;
  double t = 0;
  for (std::uint64_t id = 0; id < 80; ++id) {
    t += std::uniform_real_distribution<double>(0, 0.3)(rng);
    const std::int64_t prompt = std::uniform_int_distribution<std::int64_t>(1, 60)(rng);
    const std::int64_t output = std::uniform_int_distribution<std::int64_t>(1, 40)(rng);
    const std::int32_t n = std::uniform_int_distribution<int>(0, 3)(rng) == 1 ? 2 : 1;  // some forks
    out.push_back(testing::trace_req(id, t, prompt, output, n));
  }
  return out;
}

struct Case {
  alloc::AllocatorKind kind;
  bool mllama;
  SchedulerKind scheduler;
};

class LayerGroupPoolsRandomTest : public ::testing::TestWithParam<Case> {};

TEST_P(LayerGroupPoolsRandomTest, InvariantsHoldAfterEveryIteration) {
  const Case& c = GetParam();
  std::int64_t preemptions = 0;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    alloc::AllocatorSpec spec;
    spec.kind = c.kind;
    spec.block_size = 4;
    spec.layer_groups = c.mllama ? mllama_like() : gemma_like();
    // About 400 full-attention token equivalents (384 bytes per token): a few requests at once.
    spec.pool_bytes = 400 * 384;
    spec.max_seq_len = 128;
    spec.vattention.page_bytes = 1024;
    spec.vattention.max_batch_size = 16;
    auto allocator = alloc::make_allocator(spec);
    SchedulerSettings ss;
    ss.kind = c.scheduler;
    // vllm-v1 chunks prefills; orca must fit a recompute (<= 99 tokens) in one iteration.
    ss.max_num_batched_tokens = c.scheduler == SchedulerKind::kOrca ? 128 : 64;
    ss.max_num_seqs = 16;
    ss.preemption = PreemptionMode::kRecompute;
    ss.encoder_tokens = c.mllama ? 20 : 0;
    const testing::Outcome o = testing::simulate(workload(seed), *allocator, ss);
    EXPECT_EQ(o.requests.size(), 80u);
    EXPECT_GT(o.iterations_run, 0);
    preemptions += o.summary.preemptions;
  }
  EXPECT_GT(preemptions, 0) << "the pool should be small enough to preempt";
}

INSTANTIATE_TEST_SUITE_P(
    All, LayerGroupPoolsRandomTest,
    ::testing::Values(Case{alloc::AllocatorKind::kUniform, false, SchedulerKind::kVllmV1},
                      Case{alloc::AllocatorKind::kHybrid, false, SchedulerKind::kVllmV1},
                      Case{alloc::AllocatorKind::kJenga, false, SchedulerKind::kVllmV1},
                      Case{alloc::AllocatorKind::kVattention, false, SchedulerKind::kVllmV1},
                      Case{alloc::AllocatorKind::kUniform, true, SchedulerKind::kVllmV1},
                      Case{alloc::AllocatorKind::kHybrid, true, SchedulerKind::kVllmV1},
                      Case{alloc::AllocatorKind::kJenga, true, SchedulerKind::kVllmV1},
                      Case{alloc::AllocatorKind::kVattention, true, SchedulerKind::kVllmV1},
                      Case{alloc::AllocatorKind::kHybrid, false, SchedulerKind::kOrca},
                      Case{alloc::AllocatorKind::kVattention, true, SchedulerKind::kOrca}),
    [](const ::testing::TestParamInfo<Case>& p) {
      return std::string(alloc::to_string(p.param.kind)) + (p.param.mllama ? "_mllama_" : "_gemma_") +
             (p.param.scheduler == SchedulerKind::kOrca ? "orca" : "v1");
    });

}  // namespace
}  // namespace pagesim::sim

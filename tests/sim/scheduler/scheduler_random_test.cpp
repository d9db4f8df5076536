// Every scheduler over every allocator it can drive, on random workloads in pools small
// enough to force preemption (recompute and swap), forks, beams and prefix hits: the
// scheduler's and the allocator's invariants hold after every iteration, every request
// finishes, and the preemption counters agree.
#include <gtest/gtest.h>

#include <random>
#include <sstream>
#include <string>

#include "allocator/contiguous/contiguous_allocator.h"
#include "allocator/paged/paged_allocator.h"
#include "allocator/radix/radix_allocator.h"
#include "sim_harness.h"

namespace pagesim::sim {
namespace {

struct Case {
  std::string name;
  SchedulerKind kind;
  bool paged;
  bool prefix = false;      // paged prefix cache, with shared hashed prefixes in the trace
  bool sharing = false;     // parallel sampling and beam search in the trace
  PreemptionMode preemption = PreemptionMode::kAuto;
  std::int32_t radix_page = 0;  // > 0: a radix-tree pool (sglang) with pages of this many tokens
  SchedulePolicy order = SchedulePolicy::kLpm;
};

constexpr std::int64_t kHashTokens = 8;  // tokens one trace hash id covers

std::vector<traces::TraceRequest> workload(const Case& c, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<traces::TraceRequest> out;
  double t = 0;
  for (std::uint64_t id = 0; id < 80; ++id) {
    t += std::uniform_real_distribution<double>(0, 0.3)(rng);
    const std::int64_t prompt = std::uniform_int_distribution<std::int64_t>(1, 60)(rng);
    const std::int64_t output = std::uniform_int_distribution<std::int64_t>(1, 40)(rng);
    std::int32_t n = 1, beam = 1;
    if (c.sharing) {
      const int pick = std::uniform_int_distribution<int>(0, 3)(rng);
      if (pick == 1) n = std::uniform_int_distribution<std::int32_t>(2, 3)(rng);
      if (pick == 2 && c.paged) beam = std::uniform_int_distribution<std::int32_t>(2, 3)(rng);  // beams need shared blocks
    }
    auto r = testing::trace_req(id, t, prompt, output, n, beam);
    if (c.prefix) {  // three families of documents share their first two hash ids
      const std::uint64_t doc = id % 3;
      for (std::int64_t i = 0; i * kHashTokens < prompt; ++i)
        r.hash_ids.push_back(i < 2 ? doc * 100 + static_cast<std::uint64_t>(i) : 10'000 + id * 100 + static_cast<std::uint64_t>(i));
    }
    out.push_back(std::move(r));
  }
  return out;
}

testing::Stack build(const Case& c, const SchedulerSettings& ss) {
  if (c.radix_page > 0) {
    alloc::RadixAllocatorSettings s;
    // 384 slots; 256 with pages of 4, whose extra page per admitted request in sglang's
    // reservation (PrefillAdder) keeps a 384-slot pool from ever retracting here.
    s.num_pages = (c.radix_page == 1 ? 384 : 256) / c.radix_page;
    s.page_size = c.radix_page;
    return testing::make_stack(std::make_unique<alloc::RadixAllocator>(s), ss);
  }
  if (c.paged) {
    alloc::PagedAllocatorSettings s;
    s.num_blocks = 96;  // 384 slots: a handful of requests at a time
    s.block_size = 4;
    s.num_cpu_blocks = 24;
    s.prefix_cache = c.prefix;
    s.single_free_queue = c.kind == SchedulerKind::kVllmV1;  // as the experiment builds it
    return testing::make_stack(std::make_unique<alloc::PagedAllocator>(s), ss);
  }
  alloc::ContiguousSettings s;
  s.capacity_slots = 512;
  s.block_size = 4;
  s.max_seq_len = 160;
  s.max_chunk_blocks = 64;
  s.reservation = alloc::ReservationPolicy::parse("fixed:24");  // under-estimates: outgrown ranges preempt
  return testing::make_stack(std::make_unique<alloc::ContiguousAllocator>(s), ss);
}

class SchedulerRandomTest : public ::testing::TestWithParam<Case> {};

TEST_P(SchedulerRandomTest, InvariantsHoldAfterEveryIteration) {
  const Case& c = GetParam();
  std::int64_t preempted_runs = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    SchedulerSettings ss;
    ss.kind = c.kind;
    ss.max_num_batched_tokens = 256;
    ss.max_num_seqs = 24;
    ss.watermark = 0.01;
    ss.preemption = c.preemption;
    ss.chunk_tokens = 48;
    ss.schedule_policy = c.order;
    testing::Stack stack = build(c, ss);
    const auto trace = workload(c, seed);
    traces::VectorSource source(trace, c.prefix ? kHashTokens : 0);
    ConstantCostModel cost(0.05);
    std::ostringstream req_csv;
    Metrics metrics(MetricsSettings{}, &req_csv, nullptr);
    EngineSettings es;
    es.seed = seed;
    Simulation sim(source, *stack.scheduler, cost, es);
    testing::InvariantChecker checker(*stack.scheduler);
    sim.add_observer(metrics);
    sim.add_observer(checker);
    ASSERT_NO_THROW(sim.run()) << c.name << " seed " << seed;
    EXPECT_EQ(checker.checks(), sim.iterations());
    EXPECT_TRUE(stack.scheduler->idle());
    EXPECT_EQ(stack.allocator->num_sequences(), 0);
    stack.allocator->validate();
    const Summary s = metrics.finish(sim.now(), 0);
    EXPECT_EQ(s.requests_finished, static_cast<std::int64_t>(trace.size())) << c.name << " seed " << seed;
    EXPECT_EQ(s.preemptions, stack.scheduler->preemptions_total());
    preempted_runs += stack.scheduler->preemptions_total() > 0;
  }
  EXPECT_GT(preempted_runs, 0) << "the pools are meant to be small enough to preempt";
}

INSTANTIATE_TEST_SUITE_P(
    AllPolicies, SchedulerRandomTest,
    ::testing::Values(Case{"vllm_paged", SchedulerKind::kVllm, true},
                      Case{"vllm_sharing_auto", SchedulerKind::kVllm, true, false, true},
                      Case{"vllm_sharing_swap", SchedulerKind::kVllm, true, false, true, PreemptionMode::kSwap},
                      Case{"vllm_prefix_recompute", SchedulerKind::kVllm, true, true, false, PreemptionMode::kRecompute},
                      Case{"vllm_v0_sharing_swap", SchedulerKind::kVllmV0, true, true, true, PreemptionMode::kSwap},
                      Case{"sglang_prefix_sharing", SchedulerKind::kSglang, true, true, true, PreemptionMode::kAuto, 1},
                      Case{"sglang_page4_fcfs", SchedulerKind::kSglang, true, true, false, PreemptionMode::kAuto, 4,
                           SchedulePolicy::kFcfs},
                      Case{"sarathi_paged", SchedulerKind::kSarathi, true},
                      Case{"sarathi_prefix_sharing", SchedulerKind::kSarathi, true, true, true},
                      Case{"vllm_v1_paged", SchedulerKind::kVllmV1, true},
                      Case{"vllm_v1_prefix_sharing", SchedulerKind::kVllmV1, true, true, true},
                      Case{"orca_paged", SchedulerKind::kOrca, true, false, true},
                      Case{"orca_contiguous", SchedulerKind::kOrca, false},
                      Case{"orca_contiguous_forks", SchedulerKind::kOrca, false, false, true},
                      Case{"static_contiguous", SchedulerKind::kStatic, false},
                      Case{"static_paged_sharing", SchedulerKind::kStatic, true, false, true}),
    [](const ::testing::TestParamInfo<Case>& param_info) { return param_info.param.name; });

}  // namespace
}  // namespace pagesim::sim

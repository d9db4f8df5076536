// The scheduler tells the allocator which prompt block hashes its waiting queue holds
// (KvAllocator::hold_pending_prefix / release_pending_prefix), so that the
// `lru_protect_waiting` eviction policy can keep them. Checked after every iteration of
// random runs of every scheduler over a paged pool with that policy, under preemption
// (recompute and swap): the hashes the allocator counts as pending are exactly the distinct
// prompt hashes of the requests in the waiting state, and none is left at the end. sglang
// runs over the radix pool, which ignores the holds (no eviction policy protects them):
// there a subclass counts them as the paged cache does, and the check is the same.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <memory>
#include <set>
#include <span>
#include <sstream>
#include <string>
#include <utility>

#include "allocator/allocator_error.h"
#include "allocator/paged/paged_allocator.h"
#include "allocator/radix/radix_allocator.h"
#include "sim_harness.h"

namespace pagesim::sim {
namespace {

constexpr std::int64_t kHashTokens = 8;  // tokens one trace hash id covers

// Three families of prompts share their first two hash ids; the rest are unique.
std::vector<traces::TraceRequest> workload(std::uint64_t seed, bool sharing) {
  std::mt19937_64 rng(seed);
  std::vector<traces::TraceRequest> out;
  double t = 0;
  for (std::uint64_t id = 0; id < 80; ++id) {
    t += std::uniform_real_distribution<double>(0, 0.2)(rng);
    const std::int64_t prompt = std::uniform_int_distribution<std::int64_t>(1, 60)(rng);
    const std::int64_t output = std::uniform_int_distribution<std::int64_t>(1, 40)(rng);
    const std::int32_t n = sharing && id % 4 == 1 ? 2 : 1;
    auto r = testing::trace_req(id, t, prompt, output, n);
    const std::uint64_t doc = id % 3;
    for (std::int64_t i = 0; i * kHashTokens < prompt; ++i)
      r.hash_ids.push_back(i < 2 ? doc * 100 + static_cast<std::uint64_t>(i)
                                 : 10'000 + id * 100 + static_cast<std::uint64_t>(i));
    out.push_back(std::move(r));
  }
  return out;
}

// The radix pool with the holds counted per hash, as PrefixCache does for a policy that
// protects them (a release without its hold throws).
class HoldCountingRadix final : public alloc::RadixAllocator {
 public:
  using RadixAllocator::RadixAllocator;
  void hold_pending_prefix(std::span<const alloc::BlockHash> hashes) override {
    for (alloc::BlockHash h : hashes) ++pending_[h];
  }
  void release_pending_prefix(std::span<const alloc::BlockHash> hashes) override {
    for (alloc::BlockHash h : hashes) {
      auto it = pending_.find(h);
      if (it == pending_.end()) throw alloc::AllocatorError("released hash " + std::to_string(h) + " was not held");
      if (--it->second == 0) pending_.erase(it);
    }
  }
  std::int64_t num_pending_prefix_hashes() const { return static_cast<std::int64_t>(pending_.size()); }

 private:
  std::map<alloc::BlockHash, std::int32_t> pending_;
};

// After every iteration: the allocator's pending hashes are the waiting requests' hashes.
template <class Allocator>
class PendingChecker final : public IterationObserver {
 public:
  explicit PendingChecker(const Allocator& a) : a_(a) {}
  void on_arrival(const Request& r) override { live_.insert(&r); }
  void on_request_finished(const Request& r) override { live_.erase(&r); }
  void on_iteration(const IterationSample&, const IterationPlan&) override {
    std::set<alloc::BlockHash> waiting;
    for (const Request* r : live_)
      if (r->state == RequestState::kWaiting) waiting.insert(r->block_hashes.begin(), r->block_hashes.end());
    if (a_.num_pending_prefix_hashes() != static_cast<std::int64_t>(waiting.size())) ++mismatches_;
    nonempty_ += !waiting.empty();
  }
  std::int64_t mismatches() const { return mismatches_; }
  std::int64_t nonempty() const { return nonempty_; }

 private:
  const Allocator& a_;
  std::set<const Request*> live_;
  std::int64_t mismatches_ = 0, nonempty_ = 0;
};

struct Case {
  std::string name;
  SchedulerKind kind;
  PreemptionMode preemption = PreemptionMode::kAuto;
  bool sharing = false;
};

class WaitingPrefixTest : public ::testing::TestWithParam<Case> {};

// One seed's run of c over `owned`; returns whether it preempted and its prefix hit blocks.
template <class Allocator>
std::pair<bool, std::int64_t> run_checked(const Case& c, std::uint64_t seed, std::unique_ptr<Allocator> owned) {
  Allocator& a = *owned;
  SchedulerSettings ss;
  ss.kind = c.kind;
  ss.max_num_batched_tokens = 256;
  ss.max_num_seqs = 16;
  ss.watermark = 0.01;
  ss.preemption = c.preemption;
  ss.chunk_tokens = 48;
  testing::Stack stack = testing::make_stack(std::move(owned), ss);
  const auto trace = workload(seed, c.sharing);
  traces::VectorSource source(trace, kHashTokens);
  ConstantCostModel cost(0.05);
  std::ostringstream req_csv;
  Metrics metrics(MetricsSettings{}, &req_csv, nullptr);
  Simulation sim(source, *stack.scheduler, cost, EngineSettings{});
  testing::InvariantChecker invariants(*stack.scheduler);
  PendingChecker<Allocator> pending(a);
  sim.add_observer(metrics);
  sim.add_observer(invariants);
  sim.add_observer(pending);
  EXPECT_NO_THROW(sim.run()) << c.name << " seed " << seed;
  EXPECT_EQ(pending.mismatches(), 0) << c.name << " seed " << seed;
  EXPECT_GT(pending.nonempty(), 0) << c.name << " seed " << seed;
  EXPECT_TRUE(stack.scheduler->idle());
  EXPECT_EQ(a.num_pending_prefix_hashes(), 0) << c.name << " seed " << seed;
  const Summary s = metrics.finish(sim.now(), 0);
  EXPECT_EQ(s.requests_finished, static_cast<std::int64_t>(trace.size()));
  return {stack.scheduler->preemptions_total() > 0, a.stats().prefix.hit_blocks};
}

TEST_P(WaitingPrefixTest, PendingHashesAreTheWaitingQueues) {
  const Case& c = GetParam();
  std::int64_t preempted = 0, hits = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    std::pair<bool, std::int64_t> r;
    if (c.kind == SchedulerKind::kSglang) {
      alloc::RadixAllocatorSettings rs;
      rs.num_pages = 64;
      rs.page_size = 4;
      r = run_checked(c, seed, std::make_unique<HoldCountingRadix>(rs));
    } else {
      alloc::PagedAllocatorSettings as;
      as.num_blocks = 64;
      as.block_size = 4;
      as.num_cpu_blocks = 24;
      as.prefix_cache = true;
      as.eviction = alloc::EvictionKind::kLruProtectWaiting;
      as.single_free_queue = c.kind == SchedulerKind::kVllmV1;  // as the experiment builds it
      r = run_checked(c, seed, std::make_unique<alloc::PagedAllocator>(as));
    }
    preempted += r.first;
    hits += r.second;
  }
  EXPECT_GT(preempted, 0) << "the pool is meant to be small enough to preempt";
  EXPECT_GT(hits, 0);
}

INSTANTIATE_TEST_SUITE_P(
    AllPolicies, WaitingPrefixTest,
    ::testing::Values(Case{"vllm_recompute", SchedulerKind::kVllm, PreemptionMode::kRecompute},
                      Case{"vllm_swap_sharing", SchedulerKind::kVllm, PreemptionMode::kSwap, true},
                      Case{"sarathi", SchedulerKind::kSarathi},
                      Case{"vllm_v1", SchedulerKind::kVllmV1, PreemptionMode::kRecompute, true},
                      Case{"orca", SchedulerKind::kOrca},
                      Case{"static", SchedulerKind::kStatic},
                      Case{"vllm_v0", SchedulerKind::kVllmV0, PreemptionMode::kRecompute},
                      Case{"sglang", SchedulerKind::kSglang},
                      Case{"sglang_sharing", SchedulerKind::kSglang, PreemptionMode::kAuto, true}),
    [](const ::testing::TestParamInfo<Case>& param_info) { return param_info.param.name; });

}  // namespace
}  // namespace pagesim::sim

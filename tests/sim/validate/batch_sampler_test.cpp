// The batch sampler on every allocator policy: sampled batches round-trip through the file
// format, token runs cover each sequence, and no physical slot is claimed by two different
// token identities (the property `pagesim validate` checks through attention outputs).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <random>
#include <unistd.h>

#include "allocator/contiguous/contiguous_allocator.h"
#include "allocator/paged/paged_allocator.h"
#include "sim/validate/batch_sampler.h"
#include "sim_harness.h"

namespace pagesim::sim {
namespace {

namespace fs = std::filesystem;

struct Policy {
  std::string name;
  std::function<testing::Stack(const SchedulerSettings&)> make;
  SchedulerKind scheduler;
  std::int32_t n = 1, beam = 1;
  bool hashes = false;
};

std::vector<traces::TraceRequest> workload(const Policy& p, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<traces::TraceRequest> out;
  double t = 0;
  for (std::uint64_t id = 0; id < 60; ++id) {
    t += std::uniform_real_distribution<double>(0, 0.6)(rng);
    auto r = testing::trace_req(id, t, std::uniform_int_distribution<std::int64_t>(5, 120)(rng),
                                std::uniform_int_distribution<std::int64_t>(1, 60)(rng), p.n, p.beam);
    if (p.hashes) {  // a few shared 32-token prefixes: one hash id per 32 tokens
      const std::uint64_t doc = id % 3;
      for (std::int64_t i = 0; i * 32 < r.prompt_tokens; ++i) r.hash_ids.push_back(i < 2 ? doc * 100 + i : 1000 + id * 10 + i);
    }
    out.push_back(std::move(r));
  }
  return out;
}

using Identity = std::pair<std::string, std::int64_t>;

void check_batch(const SampledBatch& b, std::int32_t block_size, std::int64_t num_blocks) {
  std::map<std::int64_t, std::pair<Identity, std::uint64_t>> slots;  // slot -> (identity, seq)
  for (const auto& s : b.sequences) {
    ASSERT_LE(s.query_len, s.kv_len);
    ASSERT_GE(static_cast<std::int64_t>(s.block_table.size()) * block_size, s.kv_len);
    std::int64_t pos = 0;
    for (const auto& run : s.tokens) {
      ASSERT_EQ(run.start, pos) << "sequence " << s.seq;
      for (std::int64_t t = run.start; t < run.start + run.length; ++t) {
        const std::int32_t block = s.block_table[static_cast<std::size_t>(t / block_size)];
        ASSERT_GE(block, 0);
        ASSERT_LT(block, num_blocks);
        const std::int64_t slot = std::int64_t{block} * block_size + t % block_size;
        const Identity id{run.origin, run.offset + t - run.start};
        auto [it, fresh] = slots.emplace(slot, std::make_pair(id, s.seq));
        if (!fresh) {
          ASSERT_EQ(it->second.first, id) << "iteration " << b.iteration << ": slot " << slot << " holds token "
                                          << it->second.first.first << "+" << it->second.first.second
                                          << " of sequence " << it->second.second << " and " << id.first << "+"
                                          << id.second << " of sequence " << s.seq;
        }
      }
      pos += run.length;
    }
    ASSERT_EQ(pos, s.kv_len);
  }
}

class BatchSamplerTest : public ::testing::TestWithParam<Policy> {};

TEST_P(BatchSamplerTest, EverySampledSlotHasOneIdentity) {
  const Policy& p = GetParam();
  SchedulerSettings ss;
  ss.kind = p.scheduler;
  testing::Stack stack = p.make(ss);
  auto& allocator = stack.allocator;
  auto& scheduler = stack.scheduler;
  const fs::path dir = fs::temp_directory_path() / ("pagesim-sampler-" + std::to_string(getpid()) + "-" + p.name);
  fs::create_directories(dir);
  traces::VectorSource source(workload(p, 11), p.hashes ? 32 : 0);
  ConstantCostModel cost(0.05);
  Simulation sim(source, *scheduler, cost, EngineSettings{});
  BatchSampler sampler(BatchSamplerSettings{1, 100000}, *allocator, dir / "batches.jsonl", p.name);
  scheduler->set_observer(&sampler);
  sim.add_observer(sampler);
  sim.run();
  sampler.finish();
  BatchFile f = read_batch_file(dir / "batches.jsonl");
  EXPECT_EQ(static_cast<std::int64_t>(f.batches.size()), sampler.batches_written());
  EXPECT_EQ(f.header.block_size, sampler.block_size());
  EXPECT_EQ(f.header.allocator, allocator->name());
  EXPECT_GT(f.batches.size(), 50u);
  std::int64_t shared_slots = 0;
  for (const auto& b : f.batches) {
    check_batch(b, f.header.block_size, f.header.num_blocks);
    if (::testing::Test::HasFatalFailure()) break;
    std::map<std::int64_t, int> use;
    for (const auto& s : b.sequences)
      for (std::int64_t t = 0; t < s.kv_len; ++t)
        ++use[std::int64_t{s.block_table[t / f.header.block_size]} * f.header.block_size + t % f.header.block_size];
    for (const auto& [slot, n] : use) shared_slots += n > 1;
  }
  // Paged forks and prefix hits share blocks; contiguous forks copy the whole range.
  const bool shares = stack.paged && (p.n > 1 || p.beam > 1 || p.hashes);
  if (shares) {
    EXPECT_GT(shared_slots, 0) << "sharing should show up in the batches";
  } else {
    EXPECT_EQ(shared_slots, 0);
  }
  fs::remove_all(dir);
}

testing::Stack paged(std::int32_t bs, bool prefix, const SchedulerSettings& ss) {
  alloc::PagedAllocatorSettings s;
  s.num_blocks = 2048 / bs;
  s.block_size = bs;
  s.num_cpu_blocks = 1024 / bs;
  s.prefix_cache = prefix;
  return testing::make_stack(std::make_unique<alloc::PagedAllocator>(s), ss);
}

testing::Stack contiguous(alloc::PlacementKind placement, const char* reservation, const SchedulerSettings& ss) {
  alloc::ContiguousSettings s;
  s.capacity_slots = 4096;
  s.placement = placement;
  s.max_seq_len = 512;
  s.reservation = alloc::ReservationPolicy::parse(reservation);
  return testing::make_stack(std::make_unique<alloc::ContiguousAllocator>(s), ss);
}

INSTANTIATE_TEST_SUITE_P(
    AllPolicies, BatchSamplerTest,
    ::testing::Values(
        Policy{"paged16", [](const SchedulerSettings& ss) { return paged(16, false, ss); }, SchedulerKind::kVllm},
        Policy{"paged4_parallel", [](const SchedulerSettings& ss) { return paged(4, false, ss); }, SchedulerKind::kVllm, 3, 1},
        Policy{"paged8_beam", [](const SchedulerSettings& ss) { return paged(8, false, ss); }, SchedulerKind::kVllm, 1, 4},
        Policy{"paged16_prefix", [](const SchedulerSettings& ss) { return paged(16, true, ss); }, SchedulerKind::kVllm, 1, 1, true},
        Policy{"paged16_sarathi", [](const SchedulerSettings& ss) { return paged(16, true, ss); }, SchedulerKind::kSarathi, 2, 1, true},
        Policy{"buddy_pow2", [](const SchedulerSettings& ss) { return contiguous(alloc::PlacementKind::kBuddy, "pow2", ss); }, SchedulerKind::kOrca},
        Policy{"first_fit_oracle", [](const SchedulerSettings& ss) { return contiguous(alloc::PlacementKind::kFirstFit, "oracle", ss); },
               SchedulerKind::kOrca, 2, 1},
        Policy{"best_fit_fixed", [](const SchedulerSettings& ss) { return contiguous(alloc::PlacementKind::kBestFit, "fixed:16", ss); },
               SchedulerKind::kOrca}),
    [](const ::testing::TestParamInfo<Policy>& param_info) { return param_info.param.name; });

}  // namespace
}  // namespace pagesim::sim

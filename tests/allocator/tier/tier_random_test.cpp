// Randomized test of the offload tiers inside PagedAllocator: seeded admissions of
// overlapping prompts, appends, frees, swaps and transfer takes, with validate() after every
// operation — which checks that every cached block is in exactly one place (the GPU cache,
// one tier, or dropped: nothing lost or duplicated, write_back), no hash is in two tiers,
// each tier holds at most its capacity and the CPU pool is split between swapped and tier
// blocks without double counting. Same seed, same counters: the runs are deterministic.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <vector>

#include "allocator/paged/paged_allocator.h"
#include "allocator/tier/tier_stack.h"

namespace pagesim::alloc {
namespace {

std::int64_t op_count() {
  const char* env = std::getenv("PAGESIM_RANDOM_OPS");
  return env ? std::atoll(env) : 40000;
}

struct Config {
  TierWritePolicy policy;
  bool cpu, disk;
  EvictionKind eviction;
};

struct Outcome {
  std::vector<std::int64_t> numbers;
  bool operator==(const Outcome&) const = default;
};

Outcome run(const Config& c, std::uint64_t seed) {
  PagedAllocatorSettings s;
  s.num_blocks = 48;
  s.block_size = 4;
  s.num_cpu_blocks = 24;
  s.prefix_cache = true;
  s.offload.write_policy = c.policy;
  s.offload.bytes_per_block = 1e6;
  if (c.cpu) s.offload.tiers.push_back({TierKind::kCpu, 16, 1e9, 1e9, 1e-5, c.eviction});
  if (c.disk) s.offload.tiers.push_back({TierKind::kDisk, 32, 1e8, 1e8, 1e-4, c.eviction});
  PagedAllocator a(s);
  std::mt19937_64 rng(seed);
  auto pick = [&](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); };
  std::vector<SeqId> live, swapped;
  SeqId next = 1;
  std::int64_t admitted = 0, hits = 0;
  for (std::int64_t op = 0; op < op_count(); ++op) {
    const std::int64_t what = pick(0, 9);
    if (what <= 3) {
      // A prompt of a few shared documents, so prefixes repeat and get evicted and loaded.
      const std::int64_t doc = pick(0, 11), prompt = pick(1, 40);
      std::vector<BlockHash> keys;
      for (std::int64_t i = 0; i < prompt / 4; ++i) keys.push_back(static_cast<BlockHash>(doc * 1000 + i + 1));
      AdmitRequest r;
      r.seq = next;
      r.prompt_tokens = prompt;
      r.output_tokens = pick(0, 20);
      r.prompt_block_hashes = keys;
      r.readmission = pick(0, 9) == 0;
      const bool could = a.can_admit(r);
      const AdmitResult res = a.admit(r);
      EXPECT_EQ(could, res.admitted);
      if (res.admitted) {
        live.push_back(next++);
        ++admitted;
        hits += res.cached_tokens;
      }
    } else if (what <= 5 && !live.empty()) {
      const SeqId id = live[static_cast<std::size_t>(pick(0, static_cast<std::int64_t>(live.size()) - 1))];
      a.append(id, pick(1, 6));
    } else if (what == 6 && !live.empty()) {
      const auto i = static_cast<std::size_t>(pick(0, static_cast<std::int64_t>(live.size()) - 1));
      a.free(live[i]);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (what == 7 && !live.empty()) {
      const auto i = static_cast<std::size_t>(pick(0, static_cast<std::int64_t>(live.size()) - 1));
      const SeqId g[] = {live[i]};
      if (a.swap_out(g)) {
        swapped.push_back(live[i]);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
      }
    } else if (what == 8 && !swapped.empty()) {
      const SeqId g[] = {swapped.front()};
      if (a.swap_in(g)) {
        live.push_back(swapped.front());
        swapped.erase(swapped.begin());
      }
    } else {
      const TierTransfer t = a.take_tier_transfer();
      EXPECT_GE(t.seconds, 0);
      EXPECT_EQ(t.empty(), t.seconds == 0);
    }
    a.validate();
    if (::testing::Test::HasFailure()) break;
  }
  Outcome out{{admitted, hits, a.tiers()->dropped_blocks()}};
  for (std::int32_t t = 0; t < a.tiers()->num_tiers(); ++t) {
    const TierCounters& k = a.tiers()->counters(t);
    out.numbers.insert(out.numbers.end(), {k.hit_tokens, k.loaded_blocks, k.stored_blocks, k.evicted_blocks});
    EXPECT_GT(k.stored_blocks, 0) << "tier " << t << " never used: the test exercises nothing";
  }
  EXPECT_GT(a.tiers()->counters(0).loaded_blocks, 0) << "no lower-tier hit: the test exercises nothing";
  return out;
}

class TierRandom : public ::testing::TestWithParam<Config> {};

TEST_P(TierRandom, InvariantsHoldAfterEveryOperationAndRunsRepeat) {
  const Outcome first = run(GetParam(), 7);
  if (HasFailure()) return;
  EXPECT_EQ(first, run(GetParam(), 7));
}

INSTANTIATE_TEST_SUITE_P(
    Policies, TierRandom,
    ::testing::Values(Config{TierWritePolicy::kWriteBack, true, true, EvictionKind::kLru},
                      Config{TierWritePolicy::kWriteBack, true, false, EvictionKind::kLfu},
                      Config{TierWritePolicy::kWriteBack, false, true, EvictionKind::kFifo},
                      Config{TierWritePolicy::kWriteThrough, true, true, EvictionKind::kLru},
                      Config{TierWritePolicy::kWriteThrough, true, false, EvictionKind::kFifo}));

}  // namespace
}  // namespace pagesim::alloc

// FreeSlotsIndex against a scan in index order under random changes: marked changes (what the
// engine marks) and unmarked decreases (a deferred run's repeats, which bring_up applies when
// asked). most_free() must pick what a scan over every replica brought up to the instant
// picks: the most free slots, ties to the lowest index, asking each replica at most once.
#include "sim/cluster/free_slots_index.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <set>
#include <vector>

#include "allocator/paged/paged_allocator.h"
#include "sim/cost/constant_cost_model.h"
#include "sim/scheduler/scheduler.h"

namespace pagesim::sim {
namespace {

// n replicas over empty pools of 64 slots; Replica::run_free_slots moves their free slots.
struct Fleet {
  explicit Fleet(std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      alloc::PagedAllocatorSettings spec;
      spec.num_blocks = 16;
      spec.block_size = 4;
      pools.push_back(std::make_unique<alloc::PagedAllocator>(spec));
      schedulers.push_back(make_scheduler(SchedulerSettings{}, *pools.back()));
      replicas.emplace_back(static_cast<std::int32_t>(i), *schedulers.back(), cost);
    }
  }
  std::vector<std::unique_ptr<alloc::PagedAllocator>> pools;
  std::vector<std::unique_ptr<Scheduler>> schedulers;
  ConstantCostModel cost{1.0};
  std::vector<Replica> replicas;
};

std::int32_t scan(const std::vector<Replica>& replicas) {
  std::int32_t best = 0;
  for (std::size_t i = 1; i < replicas.size(); ++i)
    if (replicas[i].free_kv_slots() > replicas[static_cast<std::size_t>(best)].free_kv_slots())
      best = static_cast<std::int32_t>(i);
  return best;
}

TEST(FreeSlotsIndex, TiesGoToTheLowestIndex) {
  Fleet f(4);
  FreeSlotsIndex index(f.replicas);
  const auto exact = [](std::int32_t) { return false; };
  EXPECT_EQ(index.most_free(f.replicas, exact), 0);
  f.replicas[2].run_free_slots = 8;
  f.replicas[3].run_free_slots = 8;
  index.mark(2);
  index.mark(3);
  EXPECT_EQ(index.most_free(f.replicas, exact), 2);
  f.replicas[2].run_free_slots = 0;
  index.mark(2);
  EXPECT_EQ(index.most_free(f.replicas, exact), 3);
}

TEST(FreeSlotsIndex, UnmarkedDecreasesAreBroughtUpOnlyWhereTheyCouldWin) {
  Fleet f(3);
  FreeSlotsIndex index(f.replicas);
  f.replicas[0].run_free_slots = 10;
  f.replicas[1].run_free_slots = 5;
  index.mark(0);
  index.mark(1);
  const auto exact = [](std::int32_t) { return false; };
  ASSERT_EQ(index.most_free(f.replicas, exact), 0);
  // Replica 0's run took 8 slots that its entry does not show yet; replica 2's took 1.
  std::vector<std::int64_t> behind = {8, 0, 1};
  std::vector<std::int32_t> asked;
  const auto bring_up = [&](std::int32_t i) {
    asked.push_back(i);
    const auto k = static_cast<std::size_t>(i);
    if (behind[k] == 0) return false;
    f.replicas[k].run_free_slots -= behind[k];
    behind[k] = 0;
    return true;
  };
  EXPECT_EQ(index.most_free(f.replicas, bring_up), 1);
  EXPECT_EQ(asked, (std::vector<std::int32_t>{0, 1}));  // replica 2 (at most 0 slots) never asked
  EXPECT_EQ(behind[2], 1);
}

TEST(FreeSlotsIndex, AgreesWithAScanUnderRandomChanges) {
  std::mt19937_64 rng(20261206);
  for (const std::size_t n : {1u, 2u, 3u, 7u, 64u}) {
    Fleet f(n);
    FreeSlotsIndex index(f.replicas);
    std::vector<std::int64_t> behind(n, 0);  // slots taken that the replica does not show yet
    for (int step = 0; step < 2000; ++step) {
      const std::size_t i = rng() % n;
      const std::int64_t delta = static_cast<std::int64_t>(rng() % 9) - 4;
      if (rng() % 3 == 0) {
        behind[i] += static_cast<std::int64_t>(rng() % 4);  // a deferred run's repeats: unmarked, only take
      } else {
        f.replicas[i].run_free_slots += delta;  // anything the engine marks
        index.mark(i);
      }
      std::set<std::int32_t> asked;
      const std::int32_t got = index.most_free(f.replicas, [&](std::int32_t r) {
        EXPECT_TRUE(asked.insert(r).second) << "replica " << r << " asked twice";
        const auto k = static_cast<std::size_t>(r);
        f.replicas[k].run_free_slots -= behind[k];
        behind[k] = 0;
        return true;
      });
      for (std::size_t k = 0; k < n; ++k) f.replicas[k].run_free_slots -= behind[k];  // the instant, for the scan
      ASSERT_EQ(got, scan(f.replicas)) << "n " << n << ", step " << step;
      for (std::size_t k = 0; k < n; ++k) f.replicas[k].run_free_slots += behind[k];
    }
  }
}

}  // namespace
}  // namespace pagesim::sim

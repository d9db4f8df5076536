// Randomized test of LoRA adapter weights in a PagedAllocator (adapter_pages.h): seeded
// sequences of admit / append / free of KV sequences (some with repeating prompts, so
// cached prefix blocks compete too) interleaved with pin / unpin of adapters of random sizes,
// validate() after every operation. Checked beside the allocator's own identities: the
// breakdown sums to capacity with adapter_weights == the adapters' blocks; an adapter pinned
// by a (model) running request is never evicted; pinning drops num_free_blocks() by exactly
// adapter_blocks_to_pin(); an idle adapter is evicted only when nothing free or cached is left.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <random>
#include <vector>

#include "allocator/paged/paged_allocator.h"
#include "document_hashes.h"

namespace pagesim::alloc {
namespace {

std::int64_t op_count() {
  const char* env = std::getenv("PAGESIM_RANDOM_OPS");
  return env ? std::atoll(env) / 5 : 20000;
}

void check_breakdown(const PagedAllocator& a) {
  const MemoryBreakdown b = a.breakdown();
  ASSERT_EQ(b.total(), a.capacity_slots());
  ASSERT_EQ(b.adapter_weights, a.adapter_weight_blocks() * a.block_size());
  ASSERT_GE(b.free, 0);
}

void run_random(std::uint64_t seed, bool prefix_cache, bool single_free_queue, std::int64_t region) {
  PagedAllocatorSettings s;
  s.num_blocks = 96;
  s.block_size = 8;
  s.prefix_cache = prefix_cache;
  s.single_free_queue = single_free_queue;
  s.adapter_region_blocks = region;
  PagedAllocator a(s);
  std::mt19937_64 rng(seed);
  auto pick = [&](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); };
  const std::int32_t kAdapters = 12;
  std::vector<std::int64_t> size(kAdapters);
  for (auto& n : size) n = pick(1, 20);
  std::map<AdapterId, std::int32_t> pins;  // the model: pins of each adapter by running requests
  std::vector<SeqId> live;
  SeqId next = 1;
  std::int64_t loads = 0, evictions_seen = 0;
  for (std::int64_t op = 0; op < op_count(); ++op) {
    const std::int64_t kind = pick(0, 9);
    if (kind <= 2) {  // admit
      AdmitRequest r;
      r.seq = next++;
      r.prompt_tokens = pick(1, 60);
      r.output_tokens = pick(0, 30);
      std::vector<BlockHash> hashes;
      if (prefix_cache && pick(0, 1)) {
        hashes = test_support::document_block_hashes(pick(0, 3), r.prompt_tokens, s.block_size);
        r.prompt_block_hashes = hashes;
      }
      const bool could = a.can_admit(r);
      ASSERT_EQ(a.admit(r).admitted, could);
      if (could) live.push_back(r.seq);
    } else if (kind <= 4 && !live.empty()) {  // append
      const SeqId id = live[static_cast<std::size_t>(pick(0, static_cast<std::int64_t>(live.size()) - 1))];
      const std::int64_t n = pick(1, 12);
      const bool could = a.can_append(id, n);
      ASSERT_EQ(a.append(id, n), could);
    } else if (kind <= 5 && !live.empty()) {  // free
      const auto i = static_cast<std::size_t>(pick(0, static_cast<std::int64_t>(live.size()) - 1));
      a.free(live[i]);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (kind <= 7) {  // pin (a request using adapter `ad` starts running)
      const auto ad = static_cast<AdapterId>(pick(0, kAdapters - 1));
      const std::int64_t cost = a.adapter_blocks_to_pin(ad, size[static_cast<std::size_t>(ad)]);
      if (cost > a.num_free_blocks()) continue;
      const std::int64_t before = a.num_free_blocks();
      const bool resident = a.adapter_pages().resident(ad);
      const bool cached_or_free_short = a.num_free_blocks() - a.adapter_pages().idle_blocks() < cost;
      const std::int64_t evictions = a.adapter_evictions();
      ASSERT_EQ(a.pin_adapter(ad, size[static_cast<std::size_t>(ad)]), !resident);
      loads += !resident;
      ASSERT_EQ(a.num_free_blocks(), before - cost);
      // Adapters are evicted only when free and cached blocks ran out.
      if (!cached_or_free_short || resident) {
        ASSERT_EQ(a.adapter_evictions(), evictions);
      }
      ++pins[ad];
    } else if (!pins.empty()) {  // unpin (that request finished or was preempted)
      auto it = pins.begin();
      std::advance(it, pick(0, static_cast<std::int64_t>(pins.size()) - 1));
      a.unpin_adapter(it->first);
      if (--it->second == 0) pins.erase(it);
    }
    a.validate();
    check_breakdown(a);
    for (const auto& [ad, n] : pins) {
      ASSERT_TRUE(a.adapter_pages().resident(ad)) << "pinned adapter " << ad << " was evicted at op " << op;
      ASSERT_EQ(a.adapter_pages().pins(ad), n);
    }
    evictions_seen = a.adapter_evictions();
  }
  // The workload must have exercised loads and evictions under pressure.
  EXPECT_GT(loads, 10);
  EXPECT_GT(evictions_seen, 0);
  ASSERT_EQ(a.adapter_region_blocks(), region);
}

TEST(AdapterPagesRandom, PagedPool) { run_random(1, false, false, 0); }
TEST(AdapterPagesRandom, WithPrefixCache) { run_random(2, true, false, 0); }
TEST(AdapterPagesRandom, SingleFreeQueue) { run_random(3, true, true, 0); }
TEST(AdapterPagesRandom, BesideAFixedRegion) { run_random(4, false, false, 16); }

// vLLM's placement: the region is adapter weights from the start, and the KV gets the rest.
TEST(AdapterRegion, ShrinksTheKvPoolAndSumsToCapacity) {
  PagedAllocatorSettings s;
  s.num_blocks = 10;
  s.block_size = 4;
  s.adapter_region_blocks = 3;
  PagedAllocator a(s);
  const MemoryBreakdown b = a.breakdown();
  EXPECT_EQ(b.adapter_weights, 12);
  EXPECT_EQ(b.free, 28);
  EXPECT_EQ(b.total(), 40);
  EXPECT_EQ(a.num_free_blocks(), 7);
  AdmitRequest r;
  r.seq = 1;
  r.prompt_tokens = 28;
  EXPECT_TRUE(a.can_ever_admit(r));
  r.prompt_tokens = 29;
  EXPECT_FALSE(a.can_ever_admit(r));
  a.validate();
}

TEST(AdapterRegion, RefusesARegionAsLargeAsThePool) {
  PagedAllocatorSettings s;
  s.num_blocks = 10;
  s.adapter_region_blocks = 10;
  EXPECT_THROW(PagedAllocator{s}, AllocatorError);
}

TEST(AdapterPages, UnpinOfAnAdapterNotPinnedIsMisuse) {
  PagedAllocatorSettings s;
  s.num_blocks = 10;
  PagedAllocator a(s);
  EXPECT_THROW(a.unpin_adapter(3), AllocatorError);
  EXPECT_TRUE(a.pin_adapter(3, 2));
  EXPECT_FALSE(a.pin_adapter(3, 2));  // resident: pinned again, not loaded
  a.unpin_adapter(3);
  a.unpin_adapter(3);
  EXPECT_THROW(a.unpin_adapter(3), AllocatorError);
  EXPECT_TRUE(a.adapter_pages().resident(3));  // idle, still resident until evicted
  a.validate();
}

}  // namespace
}  // namespace pagesim::alloc

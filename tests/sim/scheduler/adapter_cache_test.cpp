// AdapterCache (sim/scheduler/adapter_cache.h): vLLM's slots (a pinned slot is never taken,
// an idle one is replaced least recently used first, the host cache counts misses) and the
// unified placement's pages priced as loads.
#include <gtest/gtest.h>

#include "sim/scheduler/adapter_cache.h"

namespace pagesim::sim {
namespace {

alloc::PagedAllocatorSettings pool_settings(std::int64_t region) {
  alloc::PagedAllocatorSettings s;
  s.num_blocks = 64;
  s.block_size = 16;
  s.adapter_region_blocks = region;
  return s;
}

TEST(AdapterCache, VllmSlotsHoldAtMostMaxLorasAndReplaceTheLeastRecentlyUsedIdleOne) {
  alloc::PagedAllocator pool(pool_settings(8));
  LoraSettings l;
  l.max_loras = 2;
  l.max_cpu_loras = 2;
  AdapterCache c(l, pool, /*adapter_bytes=*/1000, /*block_bytes=*/100, /*load_bytes_per_s=*/1e4);
  c.pin(0);
  c.pin(1);
  EXPECT_DOUBLE_EQ(c.take_load_seconds(), 0.2);
  EXPECT_FALSE(c.can_pin(2));  // both slots pinned: a batch holds at most max_loras adapters
  EXPECT_TRUE(c.can_pin(1));
  c.unpin(1);
  c.unpin(0);  // 0 is now the more recently used idle slot
  ASSERT_TRUE(c.can_pin(2));
  c.pin(2);  // replaces 1
  EXPECT_TRUE(c.resident(0));
  EXPECT_FALSE(c.resident(1));
  c.pin(1);  // replaces 0; the host cache (2 adapters: 1 and 2 now) still holds 1
  EXPECT_FALSE(c.resident(0));
  const AdapterCounters k = c.counters();
  EXPECT_EQ(k.loads, 4);
  EXPECT_EQ(k.cpu_misses, 3);
  EXPECT_EQ(k.evictions, 2);
  EXPECT_EQ(c.blocks_to_pin(5), 0);  // slots sit apart from the KV blocks
  c.validate();
  pool.validate();
}

TEST(AdapterCache, UnifiedPagesComeFromTheKvPool) {
  alloc::PagedAllocator pool(pool_settings(0));
  LoraSettings l;
  l.placement = LoraPlacement::kUnified;
  AdapterCache c(l, pool, /*adapter_bytes=*/1000, /*block_bytes=*/300, /*load_bytes_per_s=*/1e3);
  EXPECT_EQ(c.adapter_blocks(), 4);
  EXPECT_EQ(c.blocks_to_pin(7), 4);
  c.pin(7);
  EXPECT_DOUBLE_EQ(c.take_load_seconds(), 1.0);
  EXPECT_EQ(pool.breakdown().adapter_weights, 4 * 16);
  EXPECT_EQ(c.blocks_to_pin(7), 0);  // pinned already
  c.unpin(7);
  EXPECT_EQ(c.blocks_to_pin(7), 4);  // idle pages count as free until pinned again
  EXPECT_EQ(pool.num_free_blocks(), 64);
  pool.validate();
}

}  // namespace
}  // namespace pagesim::sim

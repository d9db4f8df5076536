// make_allocator: the kind names, and the paged builder refusing a contiguous spec by name.
#include "allocator/make_allocator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

#include "allocator/allocator_error.h"
#include "allocator/contiguous/contiguous_allocator.h"
#include "allocator/paged/paged_allocator.h"
#include "allocator/radix/radix_allocator.h"

namespace pagesim::alloc {
namespace {

TEST(MakeAllocator, KindNames) {
  ASSERT_EQ(kAllocatorKindNames.size(), 7u);
  EXPECT_EQ(to_string(AllocatorKind::kPaged), "paged");
  EXPECT_EQ(to_string(AllocatorKind::kContiguous), "contiguous");
  EXPECT_EQ(to_string(AllocatorKind::kRadix), "radix");
  EXPECT_EQ(to_string(AllocatorKind::kUniform), "uniform");
  EXPECT_EQ(to_string(AllocatorKind::kHybrid), "hybrid");
  EXPECT_EQ(to_string(AllocatorKind::kJenga), "jenga");
  EXPECT_EQ(to_string(AllocatorKind::kVattention), "vattention");
  EXPECT_EQ(to_string(static_cast<AllocatorKind>(99)), "?");
  for (const auto& [kind, name] : kAllocatorKindNames) EXPECT_EQ(to_string(kind), name);
}

TEST(MakeAllocator, BuildsTheKindItIsGiven) {
  AllocatorSpec spec;
  spec.capacity_slots = 1024;
  EXPECT_NE(dynamic_cast<PagedAllocator*>(make_allocator(spec).get()), nullptr);
  spec.kind = AllocatorKind::kContiguous;
  EXPECT_NE(dynamic_cast<ContiguousAllocator*>(make_allocator(spec).get()), nullptr);
  spec.kind = AllocatorKind::kRadix;
  spec.block_size = 1;
  auto radix = make_allocator(spec);
  ASSERT_NE(dynamic_cast<RadixAllocator*>(radix.get()), nullptr);
  EXPECT_EQ(radix->capacity_slots(), 1024);
  EXPECT_EQ(radix->name(), "radix(page=1)");
  spec.kind = AllocatorKind::kPaged;
  EXPECT_THROW(make_radix_allocator(spec), AllocatorError);
}

// Pools of whole blocks hold capacity_slots rounded down to them, as pool_slots() says:
// 4,100 slots in blocks of 16 are 4,096 for paged, radix and contiguous buddy alike (buddy
// refused them before); first_fit and best_fit place single slots and hold 4,100.
TEST(MakeAllocator, PoolsOfWholeBlocksHoldCapacityRoundedDownToThem) {
  AllocatorSpec spec;
  spec.capacity_slots = 4100;
  spec.block_size = 16;
  for (const AllocatorKind kind : {AllocatorKind::kPaged, AllocatorKind::kRadix, AllocatorKind::kContiguous}) {
    spec.kind = kind;
    EXPECT_TRUE(spec.whole_blocks()) << to_string(kind);
    EXPECT_EQ(spec.pool_slots(spec.capacity_slots), 4096) << to_string(kind);
    EXPECT_EQ(make_allocator(spec)->capacity_slots(), 4096) << to_string(kind);
  }
  for (const PlacementKind placement : {PlacementKind::kFirstFit, PlacementKind::kBestFit}) {
    spec.contiguous.placement = placement;
    EXPECT_FALSE(spec.whole_blocks());
    EXPECT_EQ(spec.pool_slots(spec.capacity_slots), 4100);
    EXPECT_EQ(make_allocator(spec)->capacity_slots(), 4100);
  }
  for (const AllocatorKind kind : {AllocatorKind::kUniform, AllocatorKind::kHybrid, AllocatorKind::kJenga,
                                   AllocatorKind::kVattention}) {
    spec.kind = kind;  // sized by pool_bytes
    EXPECT_FALSE(spec.whole_blocks()) << to_string(kind);
  }
}

// Its layer groups, pool and row length come from the spec's shared fields (those in
// spec.vattention are overwritten), its page size and slots from spec.vattention.
TEST(MakeAllocator, BuildsVattentionFromTheSpec) {
  AllocatorSpec spec;
  spec.kind = AllocatorKind::kVattention;
  EXPECT_THROW((void)make_allocator(spec), AllocatorError);  // no layer group given
  spec.vattention.groups = {LayerGroup{.kind = LayerGroupKind::kFull, .layers = 2, .kv_bytes_per_token = 4096}};
  spec.vattention.pool_bytes = 10 * vattention_pages::k64KiB;
  EXPECT_THROW((void)make_allocator(spec), AllocatorError);  // still none: the spec's are used
  spec.layer_groups = spec.vattention.groups;
  spec.pool_bytes = spec.vattention.pool_bytes;
  spec.vattention.page_bytes = vattention_pages::k64KiB;
  const auto a = make_allocator(spec);
  ASSERT_NE(dynamic_cast<VattentionAllocator*>(a.get()), nullptr);
  EXPECT_EQ(a->capacity_slots(), 10 * vattention_pages::k64KiB);
  EXPECT_EQ(a->name(), "vattention(page=64KiB,slots=256)");
}

// traits_of(kind) says what the pool make_allocator builds offers: its prefix cache as
// AllocatorSpec::caches_prefixes says, proposed slots, remote fetches (tiers), and the paged
// pool's own operations (swap, LoRA adapter pages, forks that never fail for beams).
TEST(MakeAllocator, TraitsSayWhatTheBuiltPoolOffers) {
  for (const auto& [kind, name] : kAllocatorKindNames) {
    const AllocatorTraits t = traits_of(kind);
    AllocatorSpec spec;
    spec.kind = kind;
    spec.capacity_slots = 4096;
    spec.layer_groups = {LayerGroup{.kind = LayerGroupKind::kFull, .layers = 2, .kv_bytes_per_token = 4096}};
    spec.pool_bytes = 64 * vattention_pages::k64KiB;
    spec.vattention.page_bytes = vattention_pages::k64KiB;
    EXPECT_EQ(is_layer_group_kind(kind), t.layer_groups) << name;
    for (const bool prefix_cache : {false, true}) {
      spec.prefix_cache = prefix_cache;
      const std::unique_ptr<KvAllocator> a = make_allocator(spec);
      EXPECT_EQ(a->caches_prefixes(), spec.caches_prefixes()) << name;
      EXPECT_EQ(spec.caches_prefixes(), t.prefix_caching == PrefixCaching::kAlways ||
                                            (prefix_cache && t.prefix_caching == PrefixCaching::kOptional))
          << name;
      EXPECT_EQ(a->holds_proposed_slots(), t.speculation) << name;
      const bool paged = dynamic_cast<const PagedAllocator*>(a.get()) != nullptr;
      EXPECT_EQ(t.swap, paged) << name;
      EXPECT_EQ(t.lora, paged) << name;
      EXPECT_EQ(t.beam, paged) << name;
      if (prefix_cache) {
        EXPECT_EQ(a->set_remote_prefix_source(nullptr), t.tiers) << name;
      }
    }
  }
}

TEST(MakeAllocator, PagedBuilderNamesTheKindItRefuses) {
  AllocatorSpec spec;
  spec.kind = AllocatorKind::kContiguous;
  spec.capacity_slots = 1024;
  try {
    make_paged_allocator(spec);
    ADD_FAILURE() << "a contiguous spec built a paged allocator";
  } catch (const AllocatorError& e) {
    EXPECT_EQ(std::string(e.what()), "allocator kind: expected paged, got 'contiguous'");
  }
}

// Found by tests/fuzz/build_run_fuzz (corpus/build_run/crash-block-size-narrowed):
// block_size 2^32 + 16 was narrowed to 16 by the paged builder, which built a pool of
// 16-token blocks while the config asked for 2^32 + 16.
TEST(MakeAllocator, RefusesABlockSizeBeyond32Bits) {
  AllocatorSpec spec;
  spec.block_size = (std::int64_t{1} << 32) + 16;
  spec.capacity_slots = spec.block_size * 4;
  for (const AllocatorKind kind : {AllocatorKind::kPaged, AllocatorKind::kContiguous}) {
    spec.kind = kind;
    try {
      (void)make_allocator(spec);
      ADD_FAILURE() << to_string(kind) << " built with block_size " << spec.block_size;
    } catch (const AllocatorError& e) {
      EXPECT_EQ(std::string(e.what()), "block_size must be at most 2147483647 tokens, got 4294967312");
    }
  }
  spec.kind = AllocatorKind::kPaged;
  EXPECT_THROW((void)make_paged_allocator(spec), AllocatorError);
}

}  // namespace
}  // namespace pagesim::alloc

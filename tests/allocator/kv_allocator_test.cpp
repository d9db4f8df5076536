// KvAllocator's admission operations: every kind refuses a malformed AdmitRequest in each of
// them alike (one check, kv_allocator.cpp), its message begun as the kind's other misuse
// messages are, and changes nothing.
#include "allocator/kv_allocator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "allocator/allocator_error.h"
#include "allocator/make_allocator.h"

namespace pagesim::alloc {
namespace {

std::unique_ptr<KvAllocator> build(AllocatorKind kind) {
  AllocatorSpec spec;
  spec.kind = kind;
  spec.capacity_slots = 4096;
  spec.block_size = 16;
  spec.prefix_cache = kind != AllocatorKind::kContiguous && kind != AllocatorKind::kVattention;
  spec.layer_groups = {LayerGroup{.kind = LayerGroupKind::kFull, .layers = 2, .kv_bytes_per_token = 4096}};
  spec.pool_bytes = 64 * vattention_pages::k64KiB;
  spec.vattention.page_bytes = vattention_pages::k64KiB;
  return make_allocator(spec);
}

AdmitRequest request(SeqId seq) {
  AdmitRequest r;
  r.seq = seq;
  r.prompt_tokens = 40;
  r.output_tokens = 8;
  return r;
}

// Each admission operation on `req`, by name; results are discarded.
std::vector<std::pair<std::string, std::function<void()>>> operations(KvAllocator& a, const AdmitRequest& req) {
  return {{"can_admit", [&] { (void)a.can_admit(req); }},
          {"can_ever_admit", [&] { (void)a.can_ever_admit(req); }},
          {"limiting_setting", [&] { (void)a.limiting_setting(req); }},
          {"max_group_slots", [&] { (void)a.max_group_slots(req, 2); }},
          {"admit", [&] { (void)a.admit(req); }},
          {"unusable_free", [&] { (void)a.unusable_free(req); }}};
}

TEST(KvAllocator, EveryKindRefusesAMalformedRequestInEveryAdmissionOperation) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  const std::vector<std::function<void(AdmitRequest&)>> malformed = {
      [](AdmitRequest& r) { r.prompt_tokens = 0; },     [](AdmitRequest& r) { r.output_tokens = -1; },
      [](AdmitRequest& r) { r.generated_tokens = -1; }, [](AdmitRequest& r) { r.encoder_tokens = -1; },
      [](AdmitRequest& r) { r.max_new_tokens = 0; },    [](AdmitRequest& r) { r.prompt_tokens = kMax; }};
  for (const auto& [kind, name] : kAllocatorKindNames) {
    const std::unique_ptr<KvAllocator> a = build(kind);
    ASSERT_TRUE(a->admit(request(1)).admitted) << name;
    const MemoryBreakdown before = a->breakdown();
    for (const auto& spoil : malformed) {
      AdmitRequest bad = request(2);
      spoil(bad);
      for (const auto& [op, call] : operations(*a, bad)) EXPECT_THROW(call(), AllocatorError) << name << " " << op;
    }
    EXPECT_EQ(a->breakdown(), before) << name;
    EXPECT_EQ(a->num_sequences(), 1) << name;
  }
}

TEST(KvAllocator, MessagesBeginAsTheKindsOthers) {
  const auto message = [](const std::function<void()>& call) {
    try {
      call();
    } catch (const AllocatorError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  AdmitRequest bad = request(7);
  bad.prompt_tokens = 0;
  const auto paged = build(AllocatorKind::kPaged);
  EXPECT_EQ(message([&] { (void)paged->admit(bad); }),
            "paged allocator: sequence 7: prompt_tokens must be >= 1, got 0");
  const auto hybrid = build(AllocatorKind::kHybrid);
  EXPECT_EQ(message([&] { (void)hybrid->can_admit(bad); }),
            "hybrid allocator: sequence 7: prompt_tokens must be >= 1, got 0");
  // Contiguous and vAttention name the operation, as in their other messages.
  const auto contiguous = build(AllocatorKind::kContiguous);
  EXPECT_EQ(message([&] { (void)contiguous->unusable_free(bad); }),
            "unusable_free: sequence 7: prompt_tokens must be >= 1, got 0");
  const auto vattention = build(AllocatorKind::kVattention);
  ASSERT_TRUE(vattention->admit(request(7)).admitted);
  EXPECT_EQ(message([&] { (void)vattention->admit(request(7)); }), "admit: sequence 7 is already live");
}

// can_admit and admit refuse a live id; the queries that admit nothing take any id.
TEST(KvAllocator, OnlyAdmissionsRefuseALiveSequence) {
  for (const auto& [kind, name] : kAllocatorKindNames) {
    const std::unique_ptr<KvAllocator> a = build(kind);
    ASSERT_TRUE(a->admit(request(1)).admitted) << name;
    EXPECT_THROW((void)a->can_admit(request(1)), AllocatorError) << name;
    EXPECT_THROW((void)a->admit(request(1)), AllocatorError) << name;
    EXPECT_TRUE(a->can_ever_admit(request(1))) << name;
    EXPECT_GT(a->max_group_slots(request(1), 1), 0) << name;
    EXPECT_GE(a->unusable_free(request(1)), 0) << name;
  }
}

// Prompt block hashes key blocks of block_size() tokens only where the pool caches prefixes:
// there, more of them than full blocks is misuse; elsewhere they are not read.
TEST(KvAllocator, TooManyPromptBlockHashesAreRefusedWhereLookedUp) {
  const std::vector<BlockHash> hashes(3, 42);  // 40 tokens hold 2 full blocks of 16
  for (const auto& [kind, name] : kAllocatorKindNames) {
    const std::unique_ptr<KvAllocator> a = build(kind);
    AdmitRequest r = request(1);
    r.prompt_block_hashes = hashes;
    if (a->caches_prefixes()) {
      EXPECT_THROW((void)a->admit(r), AllocatorError) << name;
    } else {
      EXPECT_TRUE(a->admit(r).admitted) << name;
    }
  }
}

}  // namespace
}  // namespace pagesim::alloc

#include "allocator/contiguous/contiguous_allocator.h"

#include <gtest/gtest.h>

#include <limits>
#include <ostream>
#include <string>

#include "allocator/allocator_error.h"
#include "allocator/contiguous/buddy_placement.h"
#include "allocator/contiguous/fit_placement.h"

namespace pagesim::alloc {

void PrintTo(const SlotRange& r, std::ostream* os) {
  *os << "[" << r.offset << ", " << r.end() << ")";
}

namespace {

AdmitRequest request(SeqId seq, std::int64_t prompt, std::int64_t output,
                     std::int64_t generated = 0) {
  AdmitRequest r;
  r.seq = seq;
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  r.generated_tokens = generated;
  return r;
}

ContiguousSettings settings(PlacementKind placement, const char* reservation,
                            std::int64_t capacity_slots = 15'728) {
  ContiguousSettings s;
  s.capacity_slots = capacity_slots;
  s.placement = placement;
  s.reservation = ReservationPolicy::parse(reservation);
  return s;
}

MemoryBreakdown classes(std::int64_t token_states, std::int64_t reserved,
                        std::int64_t over_reserved, std::int64_t rounding, std::int64_t free) {
  MemoryBreakdown b;
  b.token_states = token_states;
  b.reserved = reserved;
  b.over_reserved = over_reserved;
  b.rounding = rounding;
  b.free = free;
  return b;
}

// ---- sizing and accounting, computed by hand ----------------------------------------------

TEST(ContiguousAllocatorTest, DefaultsAreThePapersOrcaSetup) {
  const ContiguousAllocator a{ContiguousSettings{}};
  EXPECT_EQ(a.capacity_slots(), 15'728);
  EXPECT_EQ(a.name(), "contiguous(buddy,max)");
  EXPECT_EQ(a.placement().max_range_slots(), 2048);
  EXPECT_EQ(a.breakdown(), classes(0, 0, 0, 0, 15'728));
  a.validate();
}

TEST(ContiguousAllocatorTest, Pow2BuddyReservesThirtyTwoOutputSlotsForTwentyFive) {
  ContiguousAllocator a(settings(PlacementKind::kBuddy, "pow2"));
  const AdmitRequest r = request(1, 100, 25);
  // Reservation 100 + 32 = 132 slots = 9 blocks, rounded to 16 blocks = 256 slots.
  EXPECT_EQ(a.reservation_slots(r), 132);
  EXPECT_EQ(a.range_slots(r), 256);
  ASSERT_TRUE(a.admit(r).admitted);
  // Order 4 holds block 960 of the paper pool: the only 16-block chunk.
  EXPECT_EQ(a.range_of(1), (SlotRange{960 * 16, 256}));
  // token states 100, reserved 125 - 100, over-reserved 132 - 125, rounding 256 - 132.
  EXPECT_EQ(a.breakdown(), classes(100, 25, 7, 124, 15'728 - 256));
  a.validate();

  for (int i = 0; i < 25; ++i) ASSERT_TRUE(a.append(1, 1));  // generates its true output
  EXPECT_EQ(a.breakdown(), classes(125, 0, 7, 124, 15'728 - 256));
  a.free(1);
  EXPECT_EQ(a.breakdown(), classes(0, 0, 0, 0, 15'728));
  a.validate();
}

TEST(ContiguousAllocatorTest, Pow2FirstFitHasNoRounding) {
  ContiguousAllocator a(settings(PlacementKind::kFirstFit, "pow2"));
  ASSERT_TRUE(a.admit(request(1, 100, 25)).admitted);
  EXPECT_EQ(a.range_of(1), (SlotRange{0, 132}));
  EXPECT_EQ(a.breakdown(), classes(100, 25, 7, 0, 15'728 - 132));
  a.validate();
}

TEST(ContiguousAllocatorTest, MaxReservesTheWholeMaxSeqLen) {
  ContiguousAllocator a(settings(PlacementKind::kBuddy, "max"));
  ASSERT_TRUE(a.admit(request(1, 100, 25)).admitted);
  EXPECT_EQ(a.range_of(1), (SlotRange{0, 2048}));
  EXPECT_EQ(a.breakdown(), classes(100, 25, 2048 - 125, 0, 15'728 - 2048));
  // The paper pool holds exactly seven 2,048-slot chunks.
  for (SeqId s = 2; s <= 7; ++s) ASSERT_TRUE(a.admit(request(s, 10, 10)).admitted);
  EXPECT_FALSE(a.can_admit(request(8, 10, 10)));
  EXPECT_FALSE(a.admit(request(8, 10, 10)).admitted);
  EXPECT_FALSE(a.contains(8));
  EXPECT_EQ(a.breakdown().free, 15'728 - 7 * 2048);
  a.validate();
}

TEST(ContiguousAllocatorTest, OracleBuddyRoundsToBlocks) {
  ContiguousAllocator a(settings(PlacementKind::kBuddy, "oracle"));
  ASSERT_TRUE(a.admit(request(1, 100, 25)).admitted);  // 125 slots -> 8 blocks = 128
  EXPECT_EQ(a.range_of(1).slots, 128);
  EXPECT_EQ(a.breakdown(), classes(100, 25, 0, 3, 15'728 - 128));
  a.validate();
}

TEST(ContiguousAllocatorTest, FixedReservationMayUnderReserve) {
  ContiguousAllocator a(settings(PlacementKind::kBestFit, "fixed:10"));
  ASSERT_TRUE(a.admit(request(1, 100, 25)).admitted);
  EXPECT_EQ(a.range_of(1).slots, 110);
  // Reserved counts only the part of the output the range can hold.
  EXPECT_EQ(a.breakdown(), classes(100, 10, 0, 0, 15'728 - 110));
  EXPECT_TRUE(a.append(1, 10));
  EXPECT_FALSE(a.append(1, 1));  // the range is full: no silent growth
  EXPECT_EQ(a.sequence_tokens(1), 110);
  EXPECT_EQ(a.breakdown(), classes(110, 0, 0, 0, 15'728 - 110));
  a.validate();
}

TEST(ContiguousAllocatorTest, ReadmissionAfterRecomputeHoldsGeneratedTokens) {
  ContiguousAllocator a(settings(PlacementKind::kFirstFit, "oracle"));
  ASSERT_TRUE(a.admit(request(1, 100, 25, 10)).admitted);
  EXPECT_EQ(a.sequence_tokens(1), 110);
  EXPECT_EQ(a.range_of(1).slots, 125);
  EXPECT_EQ(a.breakdown(), classes(110, 15, 0, 0, 15'728 - 125));
  a.validate();
}

TEST(ContiguousAllocatorTest, TokensMayGrowIntoRoundingSlackButNotPastTheRange) {
  ContiguousAllocator a(settings(PlacementKind::kBuddy, "oracle"));
  ASSERT_TRUE(a.admit(request(1, 100, 25)).admitted);  // 128-slot range
  ASSERT_TRUE(a.append(1, 25));
  EXPECT_TRUE(a.can_append(1, 3));
  ASSERT_TRUE(a.append(1, 3));  // past the true final length, into the slack
  EXPECT_EQ(a.sequence_tokens(1), 128);
  // Past its declared final length, the final length counts as the current one.
  EXPECT_EQ(a.breakdown(), classes(128, 0, 0, 0, 15'728 - 128));
  a.validate();

  const MemoryBreakdown before = a.breakdown();
  EXPECT_FALSE(a.can_append(1, 1));
  EXPECT_FALSE(a.append(1, 1));
  EXPECT_EQ(a.sequence_tokens(1), 128);
  EXPECT_EQ(a.range_of(1), (SlotRange{960 * 16, 128}));
  EXPECT_EQ(a.breakdown(), before);
  EXPECT_TRUE(a.append(1, 0));  // growing by nothing always fits
  a.validate();
}

TEST(ContiguousAllocatorTest, AppendPastTheRangeChangesNothing) {
  ContiguousAllocator a(settings(PlacementKind::kFirstFit, "pow2", 1000));
  ASSERT_TRUE(a.admit(request(1, 50, 40)).admitted);  // 50 + 64 = 114 slots
  EXPECT_EQ(a.range_of(1), (SlotRange{0, 114}));
  const MemoryBreakdown before = a.breakdown();
  EXPECT_FALSE(a.can_append(1, 65));
  EXPECT_FALSE(a.append(1, 65));
  EXPECT_EQ(a.sequence_tokens(1), 50);
  EXPECT_EQ(a.breakdown(), before);
  EXPECT_TRUE(a.append(1, 64));
  EXPECT_EQ(a.sequence_tokens(1), 114);
  a.validate();
}

// ---- fork and free ------------------------------------------------------------------------

TEST(ContiguousAllocatorTest, ForkCopiesTokensIntoItsOwnRange) {
  ContiguousAllocator a(settings(PlacementKind::kFirstFit, "oracle", 1000));
  ASSERT_TRUE(a.admit(request(1, 100, 50)).admitted);  // [0, 150)
  ASSERT_TRUE(a.append(1, 20));
  ASSERT_TRUE(a.fork(1, 2));
  EXPECT_EQ(a.num_sequences(), 2);
  EXPECT_EQ(a.sequence_tokens(2), 120);
  EXPECT_EQ(a.range_of(2), (SlotRange{150, 150}));
  // Nothing is shared: both ranges count in full.
  EXPECT_EQ(a.breakdown(), classes(240, 60, 0, 0, 1000 - 300));
  // They grow independently.
  ASSERT_TRUE(a.append(2, 30));
  EXPECT_EQ(a.sequence_tokens(1), 120);
  EXPECT_EQ(a.sequence_tokens(2), 150);
  a.free(1);
  EXPECT_EQ(a.breakdown(), classes(150, 0, 0, 0, 1000 - 150));
  a.validate();
}

TEST(ContiguousAllocatorTest, ForkFailsWithoutRoomAndChangesNothing) {
  ContiguousAllocator a(settings(PlacementKind::kBestFit, "oracle", 250));
  ASSERT_TRUE(a.admit(request(1, 100, 50)).admitted);  // 150 of 250
  const MemoryBreakdown before = a.breakdown();
  EXPECT_FALSE(a.fork(1, 2));
  EXPECT_FALSE(a.contains(2));
  EXPECT_EQ(a.num_sequences(), 1);
  EXPECT_EQ(a.breakdown(), before);
  a.validate();
}

TEST(ContiguousAllocatorTest, FreedHoleIsReusedFirstFit) {
  ContiguousAllocator a(settings(PlacementKind::kFirstFit, "oracle", 1000));
  ASSERT_TRUE(a.admit(request(1, 100, 0)).admitted);  // [0, 100)
  ASSERT_TRUE(a.admit(request(2, 200, 0)).admitted);  // [100, 300)
  ASSERT_TRUE(a.admit(request(3, 100, 0)).admitted);  // [300, 400)
  a.free(2);
  ASSERT_TRUE(a.admit(request(4, 150, 0)).admitted);
  EXPECT_EQ(a.range_of(4), (SlotRange{100, 150}));
  ASSERT_TRUE(a.admit(request(5, 60, 0)).admitted);  // the 50-slot hole is too small
  EXPECT_EQ(a.range_of(5), (SlotRange{400, 60}));
  a.validate();
}

TEST(ContiguousAllocatorTest, BestFitPicksTheSmallestHole) {
  ContiguousAllocator a(settings(PlacementKind::kBestFit, "oracle", 1000));
  for (SeqId s = 1; s <= 5; ++s) ASSERT_TRUE(a.admit(request(s, 100, 0)).admitted);
  a.free(2);                                         // hole [100, 200)
  ASSERT_TRUE(a.admit(request(6, 40, 0)).admitted);  // the 100-slot hole beats the 500 at the end
  EXPECT_EQ(a.range_of(6), (SlotRange{100, 40}));
  a.free(4);  // holes [140, 200) = 60, [300, 400) = 100, [500, 1000) = 500
  ASSERT_TRUE(a.admit(request(7, 70, 0)).admitted);
  EXPECT_EQ(a.range_of(7), (SlotRange{300, 70}));
  a.validate();
}

// ---- admission limits and fragmentation ---------------------------------------------------

TEST(ContiguousAllocatorTest, CanEverAdmitRespectsMaxSeqLenAndMaxChunk) {
  ContiguousSettings s = settings(PlacementKind::kBuddy, "max");
  s.max_seq_len = 4096;  // 256 blocks, but the max chunk is 128
  ContiguousAllocator big(s);
  EXPECT_FALSE(big.can_ever_admit(request(1, 10, 10)));
  EXPECT_FALSE(big.can_admit(request(1, 10, 10)));
  EXPECT_FALSE(big.admit(request(1, 10, 10)).admitted);
  EXPECT_EQ(big.unusable_free(request(1, 10, 10)), 15'728);  // all free slots

  ContiguousAllocator a(settings(PlacementKind::kBuddy, "pow2"));
  EXPECT_TRUE(a.can_ever_admit(request(1, 2048, 0)));   // exactly max_seq_len
  EXPECT_FALSE(a.can_ever_admit(request(1, 2049, 0)));  // longer than max_seq_len
  EXPECT_FALSE(a.can_ever_admit(request(1, 2000, 100, 49)));
  EXPECT_FALSE(a.admit(request(1, 2049, 0)).admitted);

  ContiguousAllocator small(settings(PlacementKind::kFirstFit, "oracle", 100));
  EXPECT_FALSE(small.can_ever_admit(request(1, 60, 50)));  // 110 slots > pool
  EXPECT_TRUE(small.can_ever_admit(request(1, 60, 40)));
}

TEST(ContiguousAllocatorTest, LimitingSettingNamesWhatKeepsARequestOut) {
  ContiguousSettings s = settings(PlacementKind::kBuddy, "max");
  s.max_seq_len = 4096;  // 256 blocks, but the max chunk is 128
  EXPECT_EQ(ContiguousAllocator(s).limiting_setting(request(1, 10, 10)), "max_chunk_blocks");
  EXPECT_EQ(ContiguousAllocator(s).limiting_setting(request(1, 4097, 0)), "max_seq_len");  // prompt > 4096

  ContiguousAllocator a(settings(PlacementKind::kBuddy, "pow2"));
  EXPECT_EQ(a.limiting_setting(request(1, 2049, 0)), "max_seq_len");

  ContiguousAllocator small(settings(PlacementKind::kFirstFit, "oracle", 100));
  ASSERT_FALSE(small.can_ever_admit(request(1, 60, 50)));
  EXPECT_EQ(small.limiting_setting(request(1, 60, 50)), "capacity_slots");  // 110 slots > pool

  // Reservation max: max_seq_len slots for any request; above the pool, it is what to lower.
  ContiguousAllocator reserves_too_much(settings(PlacementKind::kFirstFit, "max", 100));
  ASSERT_FALSE(reserves_too_much.can_ever_admit(request(1, 10, 10)));
  EXPECT_EQ(reserves_too_much.limiting_setting(request(1, 10, 10)), "max_seq_len");
  ContiguousSettings buddy = settings(PlacementKind::kBuddy, "max", 1024);
  buddy.max_seq_len = 1 << 20;
  buddy.max_chunk_blocks = 1 << 16;
  ASSERT_FALSE(ContiguousAllocator(buddy).can_ever_admit(request(1, 10, 10)));
  EXPECT_EQ(ContiguousAllocator(buddy).limiting_setting(request(1, 10, 10)), "max_seq_len");
}

TEST(ContiguousAllocatorTest, UnusableFreeForFitIsSlotsInShorterHoles) {
  ContiguousAllocator a(settings(PlacementKind::kFirstFit, "oracle", 100));
  ASSERT_TRUE(a.admit(request(1, 10, 0)).admitted);  // [0, 10)
  ASSERT_TRUE(a.admit(request(2, 20, 0)).admitted);  // [10, 30)
  ASSERT_TRUE(a.admit(request(3, 10, 0)).admitted);  // [30, 40)
  ASSERT_TRUE(a.admit(request(4, 5, 0)).admitted);   // [40, 45)
  ASSERT_TRUE(a.admit(request(5, 10, 0)).admitted);  // [45, 55)
  a.free(2);
  a.free(4);  // holes of 20, 5 and 45 slots
  EXPECT_EQ(a.breakdown().free, 70);
  EXPECT_EQ(a.unusable_free(request(9, 5, 0)), 0);
  EXPECT_EQ(a.unusable_free(request(9, 10, 11)), 25);  // a 21-slot range
  EXPECT_EQ(a.unusable_free(request(9, 46, 0)), 70);   // fits no hole, but the pool
  EXPECT_EQ(a.unusable_free(request(9, 101, 0)), 70);  // never fits
}

TEST(ContiguousAllocatorTest, UnusableFreeForBuddyIsSlotsInLowerOrders) {
  ContiguousSettings s = settings(PlacementKind::kBuddy, "oracle", 16 * 16);
  s.max_chunk_blocks = 16;
  ContiguousAllocator a(s);
  ASSERT_TRUE(a.admit(request(1, 16, 0)).admitted);   // block 0 (order 0)
  ASSERT_TRUE(a.admit(request(2, 50, 10)).admitted);  // 60 slots -> 4 blocks at block 4
  EXPECT_EQ(a.range_of(2), (SlotRange{4 * 16, 4 * 16}));
  // Free chunks: block 1 (order 0), block 2 (order 1), block 8 (order 3): 11 blocks.
  EXPECT_EQ(a.breakdown().free, 11 * 16);
  EXPECT_EQ(a.unusable_free(request(9, 10, 0)), 0);         // needs order 0
  EXPECT_EQ(a.unusable_free(request(9, 20, 0)), 1 * 16);    // order 1
  EXPECT_EQ(a.unusable_free(request(9, 40, 0)), 3 * 16);    // order 2
  EXPECT_EQ(a.unusable_free(request(9, 100, 0)), 3 * 16);   // order 3
  EXPECT_EQ(a.unusable_free(request(9, 200, 0)), 11 * 16);  // order 4: whole pool
  a.validate();
}

// ---- misuse -------------------------------------------------------------------------------

TEST(ContiguousAllocatorTest, RejectsBadSettingsNamingTheField) {
  const auto expect_error = [](ContiguousSettings s, const std::string& field) {
    try {
      ContiguousAllocator a(s);
      ADD_FAILURE() << "accepted bad " << field;
    } catch (const AllocatorError& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  ContiguousSettings s;
  s.capacity_slots = 0;
  expect_error(s, "capacity_slots");
  s = {};
  s.capacity_slots = -16;
  expect_error(s, "capacity_slots");
  s = {};
  s.block_size = 12;
  expect_error(s, "block_size");
  s = {};
  s.block_size = 0;
  expect_error(s, "block_size");
  s = {};
  s.max_chunk_blocks = 100;
  expect_error(s, "max_chunk_blocks");
  s = {};
  s.capacity_slots = 1000;  // not a multiple of 16
  expect_error(s, "capacity_slots");
  s = {};
  s.max_seq_len = 0;
  expect_error(s, "max_seq_len");
  s = {};
  s.placement = PlacementKind::kFirstFit;
  s.block_size = 12;  // ignored outside buddy
  s.capacity_slots = 1000;
  EXPECT_NO_THROW(ContiguousAllocator{s});
}

TEST(ContiguousAllocatorTest, PlacementNames) {
  ASSERT_EQ(kPlacementKindNames.size(), 3u);
  EXPECT_EQ(to_string(PlacementKind::kBuddy), "buddy");
  EXPECT_EQ(to_string(PlacementKind::kFirstFit), "first_fit");
  EXPECT_EQ(to_string(PlacementKind::kBestFit), "best_fit");
  EXPECT_EQ(to_string(static_cast<PlacementKind>(9)), "?");
  for (const auto& [kind, name] : kPlacementKindNames) EXPECT_EQ(to_string(kind), name);
  // The placements call themselves by their table names.
  EXPECT_EQ(FitPlacement(100, FitPlacement::Rule::kFirstFit).name(), "first_fit");
  EXPECT_EQ(FitPlacement(100, FitPlacement::Rule::kBestFit).name(), "best_fit");
  EXPECT_EQ(BuddyPlacement(256, 16, 4).name(), "buddy(block=16,max_chunk=4)");
  ContiguousSettings s;
  s.placement = PlacementKind::kFirstFit;
  s.reservation = ReservationPolicy::fixed(128);
  EXPECT_EQ(ContiguousAllocator(s).name(), "contiguous(first_fit,fixed:128)");
}

TEST(ContiguousAllocatorTest, RejectsBadRequests) {
  ContiguousAllocator a(settings(PlacementKind::kFirstFit, "pow2", 1000));
  EXPECT_THROW(a.admit(request(1, 0, 5)), AllocatorError);
  EXPECT_THROW(a.admit(request(1, -3, 5)), AllocatorError);
  EXPECT_THROW(a.admit(request(1, 5, -1)), AllocatorError);
  EXPECT_THROW(a.admit(request(1, 5, 5, -1)), AllocatorError);
  EXPECT_THROW(a.can_admit(request(1, 0, 5)), AllocatorError);
  EXPECT_THROW(a.can_ever_admit(request(1, 5, -5)), AllocatorError);
  EXPECT_THROW(a.unusable_free(request(1, 0, 5)), AllocatorError);
  EXPECT_THROW(a.admit(request(1, std::numeric_limits<std::int64_t>::max(), 5)), AllocatorError);
  try {
    a.admit(request(42, 0, 5));
  } catch (const AllocatorError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("sequence 42"), std::string::npos) << msg;
    EXPECT_NE(msg.find("prompt_tokens"), std::string::npos) << msg;
  }
  EXPECT_EQ(a.num_sequences(), 0);
  EXPECT_EQ(a.breakdown().free, 1000);
  a.validate();
}

TEST(ContiguousAllocatorTest, RejectsUnknownAndDuplicateSequences) {
  ContiguousAllocator a(settings(PlacementKind::kBuddy, "pow2"));
  ASSERT_TRUE(a.admit(request(1, 100, 25)).admitted);
  const MemoryBreakdown before = a.breakdown();

  EXPECT_THROW(a.admit(request(1, 10, 10)), AllocatorError);  // duplicate admission
  EXPECT_THROW(a.can_admit(request(1, 10, 10)), AllocatorError);
  EXPECT_THROW(a.append(7, 1), AllocatorError);
  EXPECT_THROW(a.can_append(7, 1), AllocatorError);
  EXPECT_THROW(a.append(1, -1), AllocatorError);
  EXPECT_THROW(a.can_append(1, -1), AllocatorError);
  EXPECT_THROW(a.sequence_tokens(7), AllocatorError);
  EXPECT_THROW(a.range_of(7), AllocatorError);
  EXPECT_THROW(a.fork(7, 8), AllocatorError);  // unknown parent
  EXPECT_THROW(a.fork(1, 1), AllocatorError);  // child already live
  EXPECT_THROW(a.free(7), AllocatorError);
  EXPECT_EQ(a.breakdown(), before);
  EXPECT_EQ(a.num_sequences(), 1);

  a.free(1);
  try {
    a.free(1);
    ADD_FAILURE() << "double free accepted";
  } catch (const AllocatorError& e) {
    EXPECT_NE(std::string(e.what()).find("sequence 1 is not live"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(a.contains(1));
  a.validate();
}

}  // namespace
}  // namespace pagesim::alloc

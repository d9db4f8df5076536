// Randomized property tests of ContiguousAllocator: seeded random admit / append / fork / free
// (failures and misuse included) against an independent model of what each call must do.
// validate() runs after every operation.
//
// PAGESIM_CONTIGUOUS_RANDOM_OPS sets the operations per case (default 100,000).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "allocator/allocator_error.h"
#include "refused_misuse.h"
#include "allocator/contiguous/contiguous_allocator.h"

namespace pagesim::alloc {

void PrintTo(const SlotRange& r, std::ostream* os) {
  *os << "[" << r.offset << ", " << r.end() << ")";
}

namespace {

constexpr std::int64_t kBlock = 16;
// ~40 live sequences on average: big enough for many holes, small enough that validate()
// after every operation stays cheap under sanitizers.
constexpr std::int64_t kPoolBlocks = 150;  // not a power of two: chunks 4 x 32 + 16 + 4 + 2
constexpr std::int64_t kMaxChunkBlocks = 32;
constexpr std::int64_t kMaxSeqLen = 512;

std::int64_t random_ops() {
  if (const char* env = std::getenv("PAGESIM_CONTIGUOUS_RANDOM_OPS")) {
    return std::max<std::int64_t>(1, std::atoll(env));
  }
  return 100'000;
}

struct Case {
  PlacementKind placement;
  const char* reservation;
  std::uint64_t seed;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << to_string(c.placement) << "/" << c.reservation << "/seed " << c.seed;
}

std::string case_name(const testing::TestParamInfo<Case>& info) {
  std::string name = std::string(to_string(info.param.placement)) + "_" + info.param.reservation;
  std::replace(name.begin(), name.end(), ':', '_');
  return name;
}

// What the test expects of each live sequence, kept apart from the allocator.
struct ModelSeq {
  SlotRange range;
  std::int64_t tokens = 0;
  std::int64_t final_tokens = 0;
  std::int64_t reservation = 0;
};

class ContiguousRandomTest : public testing::TestWithParam<Case> {
 protected:
  ContiguousRandomTest()
      : policy_(ReservationPolicy::parse(GetParam().reservation)),
        allocator_(make_settings()),
        rng_(GetParam().seed) {}

  ContiguousSettings make_settings() const {
    ContiguousSettings s;
    s.capacity_slots = kPoolBlocks * kBlock;
    s.block_size = kBlock;
    s.max_seq_len = kMaxSeqLen;
    s.max_chunk_blocks = kMaxChunkBlocks;
    s.placement = GetParam().placement;
    s.reservation = policy_;
    return s;
  }

  bool buddy() const { return GetParam().placement == PlacementKind::kBuddy; }
  std::int64_t uniform(std::int64_t lo, std::int64_t hi) {  // inclusive
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng_);
  }

  AdmitRequest random_request(SeqId seq) {
    AdmitRequest r;
    r.seq = seq;
    // A few requests longer than max_seq_len: never admissible.
    const std::int64_t kind = uniform(0, 99);
    if (kind < 3) {
      r.prompt_tokens = uniform(kMaxSeqLen + 1, 2 * kMaxSeqLen);
      r.output_tokens = uniform(0, 300);
    } else if (kind < 60) {  // short: many live sequences, many small holes
      r.prompt_tokens = uniform(1, 48);
      r.output_tokens = uniform(0, 64);
    } else {
      r.prompt_tokens = uniform(1, 300);
      r.output_tokens = uniform(0, 300);
    }
    if (uniform(0, 9) == 0) r.generated_tokens = uniform(0, r.output_tokens);  // re-admission
    return r;
  }

  // The reservation and range size, from the policy's definition, not the allocator's code.
  std::int64_t expected_reservation(const AdmitRequest& r) const {
    std::int64_t output = 0;
    switch (policy_.kind()) {
      case ReservationPolicy::Kind::kMax: output = kMaxSeqLen; break;
      case ReservationPolicy::Kind::kPow2:
        output =
            static_cast<std::int64_t>(std::bit_ceil(static_cast<std::uint64_t>(r.output_tokens)));
        break;
      case ReservationPolicy::Kind::kOracle: output = r.output_tokens; break;
      case ReservationPolicy::Kind::kFixed: output = policy_.fixed_output_tokens(); break;
    }
    return std::max(r.tokens_at_admission(), std::min(r.prompt_tokens + output, kMaxSeqLen));
  }
  std::int64_t expected_range(std::int64_t reservation) const {
    if (!buddy()) return reservation;
    const auto blocks = static_cast<std::uint64_t>((reservation + kBlock - 1) / kBlock);
    return static_cast<std::int64_t>(std::bit_ceil(blocks)) * kBlock;
  }
  std::int64_t max_range() const {
    // Buddy: min(max chunk, largest power of two <= pool blocks) = min(32, 128) blocks.
    return buddy() ? std::min(kMaxChunkBlocks, std::int64_t{128}) * kBlock : kPoolBlocks * kBlock;
  }
  bool expected_ever(const AdmitRequest& r) const {
    return r.tokens_at_admission() <= kMaxSeqLen &&
           expected_range(expected_reservation(r)) <= max_range();
  }

  // Where a range of `slots` must go, from the free holes: buddy and best fit take the
  // smallest sufficient chunk or hole, first fit the lowest; ties go to the lowest address.
  std::optional<std::int64_t> expected_offset(std::int64_t slots) const {
    std::optional<SlotRange> best;
    for (const SlotRange& h : allocator_.placement().free_holes()) {
      if (h.slots < slots) continue;
      const bool smallest_first = GetParam().placement != PlacementKind::kFirstFit;
      if (!best || (smallest_first && h.slots < best->slots)) best = h;
      if (!smallest_first) break;  // holes come in address order
    }
    if (!best) return std::nullopt;
    return best->offset;
  }

  SeqId random_live() { return live_[static_cast<std::size_t>(uniform(0, std::ssize(live_) - 1))]; }

  void do_admit() {
    const AdmitRequest r = random_request(next_id_++);
    const bool ever = expected_ever(r);
    ASSERT_EQ(allocator_.can_ever_admit(r), ever);
    const std::int64_t range = expected_range(expected_reservation(r));
    // -1: no room (or never admissible).
    const std::int64_t offset = ever ? expected_offset(range).value_or(-1) : -1;
    ASSERT_EQ(allocator_.can_admit(r), offset >= 0);
    const AdmitResult result = allocator_.admit(r);
    ASSERT_EQ(result.admitted, offset >= 0);
    ASSERT_EQ(result.cached_tokens, 0);
    ASSERT_EQ(allocator_.contains(r.seq), result.admitted);
    if (!result.admitted) {
      ++failed_admits_;
      return;
    }
    ASSERT_EQ(allocator_.range_of(r.seq), (SlotRange{offset, range}));
    model_[r.seq] = {
        {offset, range}, r.tokens_at_admission(), r.final_tokens(), expected_reservation(r)};
    live_.push_back(r.seq);
  }

  void do_append() {
    const SeqId seq = random_live();
    ModelSeq& m = model_[seq];
    const std::int64_t n = uniform(0, 3) == 0 ? uniform(0, 60) : uniform(0, 2);
    const bool fits = m.tokens + n <= m.range.slots;
    ASSERT_EQ(allocator_.can_append(seq, n), fits);
    ASSERT_EQ(allocator_.append(seq, n), fits);
    if (fits) {
      m.tokens += n;
    } else {
      ++failed_appends_;
    }
    ASSERT_EQ(allocator_.sequence_tokens(seq), m.tokens);
  }

  void do_fork() {
    const SeqId parent = random_live();
    const SeqId child = next_id_++;
    const ModelSeq source = model_[parent];
    const std::optional<std::int64_t> offset = expected_offset(source.range.slots);
    ASSERT_EQ(allocator_.fork(parent, child), offset.has_value());
    if (!offset) {
      ++failed_forks_;
      ASSERT_FALSE(allocator_.contains(child));
      return;
    }
    ModelSeq copy = source;
    copy.range.offset = *offset;
    ASSERT_EQ(allocator_.range_of(child), copy.range);
    ASSERT_EQ(allocator_.sequence_tokens(child), source.tokens);
    model_[child] = copy;
    live_.push_back(child);
  }

  void do_free() {
    const std::size_t i = static_cast<std::size_t>(uniform(0, std::ssize(live_) - 1));
    const SeqId seq = live_[i];
    allocator_.free(seq);
    model_.erase(seq);
    live_[i] = live_.back();
    live_.pop_back();
    ASSERT_FALSE(allocator_.contains(seq));
  }

  void do_misuse() {
    test_support::expect_misuse_refused(
        allocator_, static_cast<int>(uniform(0, 4)), next_id_ + 1'000'000, next_id_, !live_.empty(),
        [this] { return random_live(); }, [this](SeqId seq) { return random_request(seq); });
    ++misuses_;
  }

  // Every identity, checked from the model after each operation.
  void check_all() {
    allocator_.validate();
    const std::int64_t capacity = allocator_.capacity_slots();
    MemoryBreakdown expected;
    std::int64_t held = 0;
    for (const auto& [seq, m] : model_) {
      expected += classify_allocation(m.tokens, std::max(m.final_tokens, m.tokens), m.reservation,
                                      m.range.slots);
      held += m.range.slots;
    }
    expected.free = capacity - held;
    const MemoryBreakdown b = allocator_.breakdown();
    ASSERT_EQ(b.total(), capacity);
    ASSERT_EQ(b.free, capacity - held);
    ASSERT_EQ(b, expected);
    ASSERT_EQ(allocator_.num_sequences(), std::ssize(live_));

    // unusable_free of a random head, against the free holes.
    const AdmitRequest head = random_request(next_id_);
    std::int64_t unusable = 0;
    const std::int64_t range = expected_range(expected_reservation(head));
    for (const SlotRange& h : allocator_.placement().free_holes()) {
      if (!expected_ever(head) || h.slots < range) unusable += h.slots;
    }
    ASSERT_EQ(allocator_.unusable_free(head), unusable);
    ASSERT_LE(unusable, b.free);
  }

  ReservationPolicy policy_;
  ContiguousAllocator allocator_;
  std::mt19937_64 rng_;
  std::unordered_map<SeqId, ModelSeq> model_;
  std::vector<SeqId> live_;
  SeqId next_id_ = 1;
  std::int64_t failed_admits_ = 0;
  std::int64_t failed_appends_ = 0;
  std::int64_t failed_forks_ = 0;
  std::int64_t misuses_ = 0;
};

TEST_P(ContiguousRandomTest, EveryOperationKeepsEveryIdentity) {
  const std::int64_t ops = random_ops();
  std::int64_t drained = 0;
  std::int64_t live_sum = 0;
  std::int64_t live_max = 0;
  for (std::int64_t step = 0; step < ops; ++step) {
    // Alternate filling phases with draining ones so the pool both saturates (failures,
    // fragmentation) and empties (merges back to the initial chunks).
    const bool draining = (step / 1'000) % 6 == 5;
    const std::int64_t r = uniform(0, 99);
    if (live_.empty() || r < (draining ? 10 : 35)) {
      ASSERT_NO_FATAL_FAILURE(do_admit());
    } else if (r < (draining ? 40 : 70)) {
      ASSERT_NO_FATAL_FAILURE(do_append());
    } else if (r < (draining ? 45 : 80)) {
      ASSERT_NO_FATAL_FAILURE(do_fork());
    } else if (r < 98) {
      ASSERT_NO_FATAL_FAILURE(do_free());
    } else {
      ASSERT_NO_FATAL_FAILURE(do_misuse());
    }
    ASSERT_NO_FATAL_FAILURE(check_all()) << "after step " << step;
    live_sum += std::ssize(live_);
    live_max = std::max<std::int64_t>(live_max, std::ssize(live_));
    if (live_.empty()) {
      ++drained;
      if (!buddy()) {  // one hole again
        ASSERT_EQ(allocator_.placement().free_holes(),
                  (std::vector<SlotRange>{{0, allocator_.capacity_slots()}}));
      }
      if (buddy()) {  // everything merged back to the initial chunks: 4 x 32 + 16 + 4 + 2 blocks
        std::vector<SlotRange> initial;
        for (std::int64_t b = 0; b < 128; b += 32) initial.push_back({b * kBlock, 32 * kBlock});
        initial.push_back({128 * kBlock, 16 * kBlock});
        initial.push_back({144 * kBlock, 4 * kBlock});
        initial.push_back({148 * kBlock, 2 * kBlock});
        ASSERT_EQ(allocator_.placement().free_holes(), initial);
      }
    }
  }
  // The run must have exercised the failure paths, not only the easy ones.
  if (ops >= 10'000) {
    EXPECT_GT(failed_admits_, 0);
    EXPECT_GT(failed_appends_, 0);
    EXPECT_GT(failed_forks_, 0);
    EXPECT_GT(misuses_, 0);
    EXPECT_GT(drained, 0);
  }
  RecordProperty("failed_admits", std::to_string(failed_admits_));
  RecordProperty("failed_appends", std::to_string(failed_appends_));
  RecordProperty("failed_forks", std::to_string(failed_forks_));
  RecordProperty("drained", std::to_string(drained));
  RecordProperty("mean_live", std::to_string(live_sum / ops));
  RecordProperty("max_live", std::to_string(live_max));
}

INSTANTIATE_TEST_SUITE_P(Policies, ContiguousRandomTest,
                         testing::Values(Case{PlacementKind::kBuddy, "pow2", 1},
                                         Case{PlacementKind::kBuddy, "max", 2},
                                         Case{PlacementKind::kBuddy, "oracle", 3},
                                         Case{PlacementKind::kFirstFit, "pow2", 4},
                                         Case{PlacementKind::kFirstFit, "oracle", 5},
                                         Case{PlacementKind::kBestFit, "pow2", 6},
                                         Case{PlacementKind::kBestFit, "fixed:48", 7}),
                         case_name);

}  // namespace
}  // namespace pagesim::alloc

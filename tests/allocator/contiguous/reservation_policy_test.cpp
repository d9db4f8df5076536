#include "allocator/contiguous/reservation_policy.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "allocator/allocator_error.h"

namespace pagesim::alloc {
namespace {

AdmitRequest request(std::int64_t prompt, std::int64_t output, std::int64_t generated = 0) {
  AdmitRequest r;
  r.seq = 1;
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  r.generated_tokens = generated;
  return r;
}

TEST(ReservationPolicyTest, ParsesEveryForm) {
  EXPECT_EQ(ReservationPolicy::parse("max"), ReservationPolicy::max());
  EXPECT_EQ(ReservationPolicy::parse("pow2"), ReservationPolicy::pow2());
  EXPECT_EQ(ReservationPolicy::parse("oracle"), ReservationPolicy::oracle());
  const ReservationPolicy fixed = ReservationPolicy::parse("fixed:128");
  EXPECT_EQ(fixed.kind(), ReservationPolicy::Kind::kFixed);
  EXPECT_EQ(fixed.fixed_output_tokens(), 128);
  EXPECT_EQ(ReservationPolicy::parse("fixed:0").fixed_output_tokens(), 0);
}

TEST(ReservationPolicyTest, ToStringRoundTrips) {
  for (const char* text : {"max", "pow2", "oracle", "fixed:0", "fixed:128"}) {
    EXPECT_EQ(ReservationPolicy::parse(text).to_string(), text);
  }
}

TEST(ReservationPolicyTest, DefaultIsMax) {
  EXPECT_EQ(ReservationPolicy(), ReservationPolicy::max());
}

TEST(ReservationPolicyTest, RejectsBadTextNamingTheValueAndTheChoices) {
  for (const char* text : {"", "Max", "pow3", "fixed", "fixed:", "fixed:-1", "fixed:+5", "fixed: 5",
                           "fixed:12x", "fixed:99999999999999999999", "oracle "}) {
    try {
      ReservationPolicy::parse(text);
      ADD_FAILURE() << "accepted \"" << text << "\"";
    } catch (const AllocatorError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("\"" + std::string(text) + "\""), std::string::npos) << msg;
      EXPECT_NE(msg.find("max, pow2, oracle, fixed:N"), std::string::npos) << msg;
    }
  }
  EXPECT_THROW(ReservationPolicy::fixed(-1), AllocatorError);
}

TEST(ReservationPolicyTest, EstimatedOutputPerPolicy) {
  const AdmitRequest r = request(100, 25);
  EXPECT_EQ(ReservationPolicy::max().estimated_output(r, 2048), 2048);
  EXPECT_EQ(ReservationPolicy::pow2().estimated_output(r, 2048), 32);
  EXPECT_EQ(ReservationPolicy::oracle().estimated_output(r, 2048), 25);
  EXPECT_EQ(ReservationPolicy::fixed(128).estimated_output(r, 2048), 128);
  // Powers of two stay; 0 rounds to 1 (std::bit_ceil).
  EXPECT_EQ(ReservationPolicy::pow2().estimated_output(request(1, 32), 2048), 32);
  EXPECT_EQ(ReservationPolicy::pow2().estimated_output(request(1, 33), 2048), 64);
  EXPECT_EQ(ReservationPolicy::pow2().estimated_output(request(1, 1), 2048), 1);
  EXPECT_EQ(ReservationPolicy::pow2().estimated_output(request(1, 0), 2048), 1);
}

TEST(ReservationPolicyTest, ReservationIsCappedByMaxSeqLen) {
  // Pow2 of 25 is 32: 100 + 32 = 132 slots.
  EXPECT_EQ(ReservationPolicy::pow2().reservation_slots(request(100, 25), 2048), 132);
  EXPECT_EQ(ReservationPolicy::oracle().reservation_slots(request(100, 25), 2048), 125);
  EXPECT_EQ(ReservationPolicy::max().reservation_slots(request(100, 25), 2048), 2048);
  EXPECT_EQ(ReservationPolicy::fixed(128).reservation_slots(request(100, 25), 2048), 228);
  // 1500 + pow2(600) = 1500 + 1024 > 2048: capped.
  EXPECT_EQ(ReservationPolicy::pow2().reservation_slots(request(1500, 600), 2048), 2048);
  EXPECT_EQ(ReservationPolicy::fixed(128).reservation_slots(request(2000, 10), 2048), 2048);
}

TEST(ReservationPolicyTest, ReservationNeverBelowTokensAtAdmission) {
  // Re-admitted after a recompute preemption with 80 generated tokens: holds 180 > 100 + 16.
  EXPECT_EQ(ReservationPolicy::fixed(16).reservation_slots(request(100, 200, 80), 2048), 180);
  // A prompt longer than max_seq_len still gets room for what it holds.
  EXPECT_EQ(ReservationPolicy::oracle().reservation_slots(request(3000, 5), 2048), 3000);
}

TEST(ReservationPolicyTest, SaturatesInsteadOfOverflowing) {
  constexpr std::int64_t kBig = std::numeric_limits<std::int64_t>::max() - 10;
  EXPECT_EQ(ReservationPolicy::fixed(kBig).reservation_slots(request(100, 1), 2048), 2048);
  EXPECT_EQ(ReservationPolicy::oracle().reservation_slots(request(100, kBig), 2048), 2048);
  EXPECT_EQ(ReservationPolicy::pow2().reservation_slots(request(100, kBig), 2048), 2048);
}

}  // namespace
}  // namespace pagesim::alloc

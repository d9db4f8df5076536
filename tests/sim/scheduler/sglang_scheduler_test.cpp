// sglang over the radix-tree pool on small traces whose timelines were worked out by hand,
// under a constant cost model of 1 s per iteration.
#include <gtest/gtest.h>

#include "allocator/radix/radix_allocator.h"
#include "sim_harness.h"

namespace pagesim::sim {
namespace {

using testing::parse_csv;
using testing::trace_req;

alloc::RadixAllocator radix(std::int64_t pages, std::int32_t page_size = 1) {
  alloc::RadixAllocatorSettings s;
  s.num_pages = pages;
  s.page_size = page_size;
  return alloc::RadixAllocator(s);
}

SchedulerSettings sglang(std::int64_t budget, SchedulePolicy policy = SchedulePolicy::kLpm) {
  SchedulerSettings s;
  s.kind = SchedulerKind::kSglang;
  s.max_num_batched_tokens = budget;
  s.schedule_policy = policy;
  return s;
}

// Page size 1, hash blocks of 4 tokens, a prefill budget of 8 tokens. r0 (prompt 8, ids
// {1,2}, output 2) runs it0. At 0.5 r1 (ids {5,6}) and r2 (ids {1,2}: r0's prompt) arrive,
// prompt 8, output 1. At it1 r2 matches 7 tokens (its last is always computed), r1 none.
//   lpm:  r2 first (1 token), then r1 cut to the 7 tokens left: it1 prefills 8 tokens and
//         r0's decode waits; r2 finishes at 2; it2 prefills r1's last token (r0 waits
//         again), r1 finishes at 3; it3 decodes r0, which finishes at 4.
//   fcfs: r1 first, whole (8 tokens): the budget is spent; r1 finishes at 2; it2 prefills
//         r2's 1 token, it finishes at 3; it3 decodes r0 (finish 4).
TEST(SglangScheduler, LongestPrefixFirstOrdersTheWaitingQueue) {
  auto trace = [] {
    auto r0 = trace_req(0, 0, 8, 2);
    r0.hash_ids = {1, 2};
    auto r1 = trace_req(1, 0.5, 8, 1);
    r1.hash_ids = {5, 6};
    auto r2 = trace_req(2, 0.5, 8, 1);
    r2.hash_ids = {1, 2};
    return std::vector<traces::TraceRequest>{r0, r1, r2};
  };
  {
    auto a = radix(64);
    auto o = testing::simulate_hashed(trace(), 4, a, sglang(8));
    EXPECT_EQ(o.iterations_run, 4);
    EXPECT_EQ(o.request(2).at("cached_tokens"), "7");
    EXPECT_DOUBLE_EQ(o.value(2, "finish_s"), 2);
    EXPECT_DOUBLE_EQ(o.value(1, "finish_s"), 3);
    EXPECT_DOUBLE_EQ(o.value(0, "finish_s"), 4);
    EXPECT_EQ(o.iterations[1].at("prefill_tokens"), "8");
    EXPECT_EQ(o.iterations[1].at("decode_tokens"), "0");
    EXPECT_EQ(o.iterations[2].at("prefill_tokens"), "1");
    EXPECT_EQ(o.iterations[3].at("decode_tokens"), "1");
  }
  {
    auto a = radix(64);
    auto o = testing::simulate_hashed(trace(), 4, a, sglang(8, SchedulePolicy::kFcfs));
    EXPECT_EQ(o.iterations_run, 4);
    EXPECT_EQ(o.request(2).at("cached_tokens"), "7");
    EXPECT_DOUBLE_EQ(o.value(1, "finish_s"), 2);
    EXPECT_DOUBLE_EQ(o.value(2, "finish_s"), 3);
    EXPECT_DOUBLE_EQ(o.value(0, "finish_s"), 4);
    EXPECT_EQ(o.iterations[1].at("prefill_tokens"), "8");
    EXPECT_EQ(o.iterations[2].at("prefill_tokens"), "1");
  }
}

// Page size 1, hash blocks of 16 tokens, a budget of 56 tokens, three requests at 0 of output
// 1: r0 (prompt 40, ids {1,2,3}), r1 (prompt 40, ids {1,2,4}), r2 (prompt 16, id {9}). None
// matches the empty tree, but r1 shares 32 tokens with r0, ahead of it in the queue: SGLang
// deprioritises r1 (IN_BATCH_PREFIX_CACHING thresholds, 32), so it0 prefills r0 and r2
// (56 tokens) and both finish at 1; it1 finds r0's first 32 tokens cached for r1, which
// computes 8 and finishes at 2. (Sorted by tree match alone, r1 would follow r0, be cut to
// 16 tokens and hit nothing.)
TEST(SglangScheduler, WaitingRequestSharingAPrefixWithAnEarlierOneGoesLast) {
  auto a = radix(256);
  auto r0 = trace_req(0, 0, 40, 1);
  r0.hash_ids = {1, 2, 3};
  auto r1 = trace_req(1, 0, 40, 1);
  r1.hash_ids = {1, 2, 4};
  auto r2 = trace_req(2, 0, 16, 1);
  r2.hash_ids = {9};
  auto o = testing::simulate_hashed({r0, r1, r2}, 16, a, sglang(56));
  EXPECT_EQ(o.iterations_run, 2);
  EXPECT_EQ(o.iterations[0].at("prefill_tokens"), "56");
  EXPECT_DOUBLE_EQ(o.value(0, "finish_s"), 1);
  EXPECT_DOUBLE_EQ(o.value(2, "finish_s"), 1);
  EXPECT_EQ(o.request(1).at("cached_tokens"), "32");
  EXPECT_EQ(o.iterations[1].at("prefill_tokens"), "8");
  EXPECT_DOUBLE_EQ(o.value(1, "finish_s"), 2);
}

// Pool of 39 pages of 1 token. r0 (prompt 2, output 20) at 0, r1 (prompt 2, output 20) at
// 0.5. it1: r0's reservation is 0.7 × 19 = 13.3 tokens and 37 pages are available, so r1's
// 2 + 20 tokens + one page (23) stay below 37 − 13.3 = 23.7: prefill-only it1. From it2 both
// decode in step, 35 − 2 (k − 2) pages free before it_k, until it19 needs 2 with 1 free: r1
// (fewest generated, then longest prompt, then latest in the running order) is retracted
// with 18 tokens generated and new_token_ratio becomes min(1, (18 + 20) / (20 + 1)) = 1 (r0,
// the one kept: its generated tokens + 20 over its max_new_tokens + 1). r0 finishes at 21;
// it21 re-prefills r1's 20 tokens (nothing runs) and it finishes at 23 after one decode.
TEST(SglangScheduler, RetractsTheRequestWithTheFewestGeneratedTokensOnOutOfMemory) {
  auto a = radix(39);
  auto o = testing::simulate({trace_req(0, 0, 2, 20), trace_req(1, 0.5, 2, 20)}, a, sglang(100));
  EXPECT_EQ(o.iterations_run, 23);
  EXPECT_DOUBLE_EQ(o.value(1, "first_token_s"), 2);
  EXPECT_EQ(o.iterations[1].at("prefill_tokens"), "2");
  EXPECT_EQ(o.iterations[1].at("decode_tokens"), "0");
  EXPECT_EQ(o.iterations[19].at("preemptions"), "1");
  EXPECT_EQ(o.iterations[19].at("decode_tokens"), "1");
  EXPECT_DOUBLE_EQ(o.value(0, "finish_s"), 21);
  EXPECT_EQ(o.iterations[21].at("prefill_tokens"), "20");
  EXPECT_DOUBLE_EQ(o.value(1, "finish_s"), 23);
  EXPECT_EQ(o.request(1).at("preemptions"), "1");
  EXPECT_EQ(o.request(1).at("recomputed_tokens"), "20");
}

// The same pool and first two requests under fcfs, and r2 (prompt 12, output 2) at 1.5: its
// 12 + 2 + 1 tokens never fit beside the running requests' reservation (NO_TOKEN: the batch
// is full). it19 retracts r1, which rejoins the BACK of the waiting queue (SGLang's
// update_running_batch appends it) and the batch is no longer full. it20: r0 reserves
// 1 × 1 token of its 19 free pages, so r2 (15 < 18) is admitted; r1 (20 + 2 + 1) is not.
// it21 decodes r0 and r2, which finish at 22; it22 filters them and re-prefills r1, which
// finishes at 24. (At the front, r1 would block r2 at it20.)
TEST(SglangScheduler, RetractedRequestRejoinsTheBackOfTheWaitingQueue) {
  auto a = radix(39);
  auto o = testing::simulate({trace_req(0, 0, 2, 20), trace_req(1, 0.5, 2, 20), trace_req(2, 1.5, 12, 2)}, a,
                             sglang(100, SchedulePolicy::kFcfs));
  EXPECT_EQ(o.iterations_run, 24);
  EXPECT_EQ(o.iterations[19].at("preemptions"), "1");
  EXPECT_EQ(o.iterations[20].at("prefill_tokens"), "12");
  EXPECT_DOUBLE_EQ(o.value(2, "finish_s"), 22);
  EXPECT_EQ(o.iterations[22].at("prefill_tokens"), "20");
  EXPECT_DOUBLE_EQ(o.value(1, "finish_s"), 24);
}

// Pool of 40 pages of 1 token, fcfs. r0 (prompt 2, output 3) at 0, r1 (prompt 2, output 30)
// at 0.5, r2 (prompt 12, output 2) at 1.5. it2: r2 needs 12 + 2 + 1 = 15 tokens, but 36 pages
// minus the reservations 0.7 × 2 + 0.7 × 29 leave 14.3: NO_TOKEN, the batch is full. r0
// finishes with it3's decode; SGLang filters it out only in it4's update_running_batch, after
// it4's prefill attempt was skipped, so r2 (which would fit at it4: 36 − 0.698 × 26 ≈ 17.9)
// is admitted at it5 and finishes at 7.
TEST(SglangScheduler, FullBatchTriesNoAdmissionUntilItShrinks) {
  auto a = radix(40);
  auto o = testing::simulate({trace_req(0, 0, 2, 3), trace_req(1, 0.5, 2, 30), trace_req(2, 1.5, 12, 2)}, a,
                             sglang(100, SchedulePolicy::kFcfs));
  EXPECT_DOUBLE_EQ(o.value(0, "finish_s"), 4);
  EXPECT_EQ(o.iterations[4].at("prefill_tokens"), "0");
  EXPECT_EQ(o.iterations[4].at("decode_tokens"), "1");
  EXPECT_EQ(o.iterations[5].at("prefill_tokens"), "12");
  EXPECT_DOUBLE_EQ(o.value(2, "first_token_s"), 6);
  EXPECT_DOUBLE_EQ(o.value(2, "finish_s"), 7);
}

// Pages of 2 tokens, hash blocks of 2, a budget of 4 tokens. r0 (prompt 10, ids 1..5,
// output 1) is prefilled in chunks of 4, 4 and 2 tokens (it0..it2), each chunk's full pages
// joining the tree; it finishes at 3. r1 (prompt 10, ids 1..4 then 9) arrives at 2.5 and
// matches the 4 pages r0's first two chunks inserted: 8 tokens cached, it3 computes 2,
// r1 finishes at 4.
TEST(SglangScheduler, ChunkedPrefillInsertsEveryChunkIntoTheTree) {
  auto a = radix(64, 2);
  auto r0 = trace_req(0, 0, 10, 1);
  r0.hash_ids = {1, 2, 3, 4, 5};
  auto r1 = trace_req(1, 2.5, 10, 1);
  r1.hash_ids = {1, 2, 3, 4, 9};
  auto o = testing::simulate_hashed({r0, r1}, 2, a, sglang(4));
  EXPECT_EQ(o.iterations_run, 4);
  EXPECT_EQ(o.iterations[0].at("prefill_tokens"), "4");
  EXPECT_EQ(o.iterations[1].at("prefill_tokens"), "4");
  EXPECT_EQ(o.iterations[2].at("prefill_tokens"), "2");
  EXPECT_DOUBLE_EQ(o.value(0, "finish_s"), 3);
  EXPECT_EQ(o.request(1).at("cached_tokens"), "8");
  EXPECT_EQ(o.iterations[3].at("prefill_tokens"), "2");
  EXPECT_DOUBLE_EQ(o.value(1, "finish_s"), 4);
  // r0's 5 pages and r1's own last page stay cached after both finish.
  EXPECT_EQ(a.breakdown().cached_free, 12);
}

}  // namespace
}  // namespace pagesim::sim

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

// Pool of 21 pages of 1 token. r0 (prompt 2, output 10) at 0, r1 (prompt 2, output 10) at
// 0.5. it1: r0's reservation is 0.7 × 9 remaining = 6.3 tokens, 19 pages are available, so
// r1's 2 + 10 tokens fit (12 <= 12.7): prefill-only it1. From it2 both decode in step, each
// holding k + 1 tokens after it_k, until it10 needs 2 pages with 1 available: r1 (fewest
// generated, then longest prompt, then latest in the running order) is retracted with 9
// tokens generated and new_token_ratio becomes min(1, (10 + 20) / (10 + 1)) = 1 (r0, the one
// kept: its generated tokens + 20 over its max_new_tokens + 1). r0 finishes at 11;
// it11 re-prefills r1's 11 tokens and its 10th token finishes it at 12.
TEST(SglangScheduler, RetractsTheRequestWithTheFewestGeneratedTokensOnOutOfMemory) {
  auto a = radix(21);
  auto o = testing::simulate({trace_req(0, 0, 2, 10), trace_req(1, 0.5, 2, 10)}, a, sglang(100));
  EXPECT_EQ(o.iterations_run, 12);
  EXPECT_DOUBLE_EQ(o.value(1, "first_token_s"), 2);
  EXPECT_EQ(o.iterations[1].at("prefill_tokens"), "2");
  EXPECT_EQ(o.iterations[1].at("decode_tokens"), "0");
  EXPECT_EQ(o.iterations[10].at("preemptions"), "1");
  EXPECT_EQ(o.iterations[10].at("decode_tokens"), "1");
  EXPECT_DOUBLE_EQ(o.value(0, "finish_s"), 11);
  EXPECT_EQ(o.iterations[11].at("prefill_tokens"), "11");
  EXPECT_DOUBLE_EQ(o.value(1, "finish_s"), 12);
  EXPECT_EQ(o.request(1).at("preemptions"), "1");
  EXPECT_EQ(o.request(1).at("recomputed_tokens"), "11");
}

// The same pool and first two requests under fcfs, and r2 (prompt 12, output 2) at 1.5: its
// 14 tokens never fit beside the running requests' reservation. it10 retracts r1, which
// rejoins the BACK of the waiting queue (SGLang's update_running_batch appends it): it11
// admits r2 alone (nothing runs; then r1's 11 + 1 tokens exceed 21 - 12 - 2 = 7), r2
// finishes at 13 after one decode, and it13 re-prefills r1, which finishes at 14. (At the
// front, r1 would go first and finish at 12, r2 at 14.)
TEST(SglangScheduler, RetractedRequestRejoinsTheBackOfTheWaitingQueue) {
  auto a = radix(21);
  auto o = testing::simulate({trace_req(0, 0, 2, 10), trace_req(1, 0.5, 2, 10), trace_req(2, 1.5, 12, 2)}, a,
                             sglang(100, SchedulePolicy::kFcfs));
  EXPECT_EQ(o.iterations_run, 14);
  EXPECT_EQ(o.iterations[10].at("preemptions"), "1");
  EXPECT_EQ(o.iterations[11].at("prefill_tokens"), "12");
  EXPECT_DOUBLE_EQ(o.value(2, "finish_s"), 13);
  EXPECT_EQ(o.iterations[13].at("prefill_tokens"), "11");
  EXPECT_DOUBLE_EQ(o.value(1, "finish_s"), 14);
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

// Randomized test of PagedAllocator's proposed slots (speculative decoding,
// allocator/proposed_slots.h): seeded sequences of admit (chunked, with prefix keys from a
// few documents), grow, grow_proposed, verify_proposed, free (a preemption mid-step
// included), fork and swaps, validate() after every one. A model of each sequence's
// committed and pending tokens checks what the allocator reports: the breakdown sums to
// capacity with the pending slots in their own classes (never token states), verification
// keeps exactly the accepted proposals, and no block holding a proposed token is ever cached
// (validate() checks that one; the prefix-cache check below sees it from outside).
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

struct Model {
  std::int64_t committed = 0;  // tokens whose KV is kept
  std::int64_t prompt = 0;     // prompt tokens (prefill done once committed >= prompt)
  ProposedSlots pending;       // the pending step's slots
  bool stepping = false;       // a step is pending (grow_proposed, not verified yet)
  bool swapped = false;
};

void run(const PagedAllocatorSettings& settings, std::uint32_t seed) {
  PagedAllocator a(settings);
  const std::int32_t B = settings.block_size;
  std::mt19937_64 rng(seed);
  auto uniform = [&](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); };
  std::map<SeqId, Model> live;
  SeqId next = 1;
  std::int64_t proposals = 0, verifications = 0, preempted_pending = 0, accepted_total = 0;
  auto pick = [&]() -> std::pair<const SeqId, Model>* {
    if (live.empty()) return nullptr;
    auto it = live.begin();
    std::advance(it, uniform(0, static_cast<std::int64_t>(live.size()) - 1));
    return &*it;
  };
  auto check = [&](const char* op) {
    a.validate();
    const MemoryBreakdown b = a.breakdown();
    ASSERT_EQ(b.total(), a.capacity_slots()) << op;
    std::int64_t acc = 0, rej = 0, look = 0, committed = 0;
    for (const auto& [id, m] : live) {
      if (m.swapped) continue;
      acc += m.pending.proposed - m.pending.rejected;
      rej += m.pending.rejected;
      look += m.pending.lookahead;
      committed += m.committed + (m.stepping ? 1 : 0);  // the newest token counts
    }
    ASSERT_EQ(b.proposed_accepted, acc) << op;
    ASSERT_EQ(b.proposed_rejected, rej) << op;
    ASSERT_EQ(b.lookahead, look) << op;
    ASSERT_EQ(b.draft_kv, 0) << op;
    ASSERT_GE(b.rounding, 0) << op;
    ASSERT_GE(b.free, 0) << op;
    (void)committed;  // token states also count shared blocks once: not compared here
  };
  for (std::int64_t op = 0; op < op_count(); ++op) {
    const std::int64_t kind = uniform(0, 99);
    auto* e = pick();
    if (kind < 15 || !e) {  // admit, sometimes chunked, prompts from 3 documents
      const std::int64_t doc = uniform(0, 2), prompt = uniform(1, 5 * B);
      const std::vector<BlockHash> hashes = test_support::document_block_hashes(doc, prompt, B);
      AdmitRequest r;
      r.seq = next;
      r.prompt_tokens = prompt;
      r.output_tokens = uniform(1, 3 * B);
      if (settings.prefix_cache) r.prompt_block_hashes = hashes;
      if (uniform(0, 1)) r.max_new_tokens = uniform(1, 2 * B);
      const AdmitResult res = a.admit(r);
      if (res.admitted) live[next] = Model{.committed = res.held_tokens, .prompt = prompt, .pending = {}};
      ++next;
      check("admit");
    } else if (kind < 30) {  // grow by a chunk (prefill) or one token
      Model& m = e->second;
      if (m.swapped || m.stepping) continue;
      const std::int64_t n = m.committed < m.prompt ? std::min(m.prompt - m.committed, uniform(1, 2 * B)) : 1;
      if (a.append(e->first, n)) m.committed += n;
      check("append");
    } else if (kind < 55) {  // a speculative step: newest token + proposals + lookahead
      Model& m = e->second;
      if (m.swapped || m.stepping || m.committed < m.prompt) continue;
      ProposedSlots p;
      p.proposed = uniform(0, 2 * B + 1);
      p.rejected = uniform(0, p.proposed);
      p.lookahead = uniform(0, 1) ? p.proposed : 0;
      const std::int64_t before = a.sequence_tokens(e->first);
      if (a.grow_proposed(a.handle(e->first), p)) {
        ASSERT_EQ(a.sequence_tokens(e->first), before + 1 + p.pending());
        m.pending = p;
        m.stepping = true;
        ++proposals;
      } else {
        ASSERT_EQ(a.sequence_tokens(e->first), before) << "a refused grow_proposed changed the sequence";
      }
      check("grow_proposed");
    } else if (kind < 75) {  // verification
      Model& m = e->second;
      if (m.swapped) continue;
      const bool had = m.stepping;
      m.stepping = false;
      a.verify_proposed(a.handle(e->first));
      if (had) {
        const std::int64_t accepted = m.pending.proposed - m.pending.rejected;
        m.committed += 1 + accepted;
        accepted_total += accepted;
        ++verifications;
      }
      m.pending = {};
      ASSERT_EQ(a.sequence_tokens(e->first), m.committed);
      check("verify_proposed");
    } else if (kind < 85) {  // free: finished, or preempted (maybe mid-step)
      if (e->second.pending.pending() > 0) ++preempted_pending;
      a.free(e->first);
      live.erase(e->first);
      check("free");
    } else if (kind < 92) {  // fork (parallel sampling) of a sequence with nothing pending
      Model& m = e->second;
      if (m.swapped || m.stepping) continue;
      const Model copy = m;
      if (a.fork(e->first, next)) live[next] = copy;
      ++next;
      check("fork");
    } else if (settings.num_cpu_blocks > 0) {  // swap a sequence with nothing pending
      Model& m = e->second;
      if (m.stepping || m.committed < m.prompt) continue;  // swaps happen between steps, after prefill
      const SeqId id = e->first;
      if (m.swapped) {
        if (a.swap_in(std::span<const SeqId>(&id, 1))) m.swapped = false;
      } else if (a.swap_out(std::span<const SeqId>(&id, 1))) {
        m.swapped = true;
      }
      check("swap");
    }
    if (::testing::Test::HasFatalFailure()) return;
  }
  for (const auto& [id, m] : live) a.free(id);
  a.validate();
  EXPECT_EQ(a.breakdown().free, a.capacity_slots());
  // The sequences exercised every path.
  EXPECT_GT(proposals, 100);
  EXPECT_GT(verifications, 100);
  EXPECT_GT(preempted_pending, 10);
  EXPECT_GT(accepted_total, 0);
}

PagedAllocatorSettings pool(std::int64_t blocks, std::int32_t block_size, std::int64_t cpu_blocks, bool prefix_cache,
                            bool single_free_queue) {
  PagedAllocatorSettings s;
  s.num_blocks = blocks;
  s.block_size = block_size;
  s.num_cpu_blocks = cpu_blocks;
  s.prefix_cache = prefix_cache;
  s.single_free_queue = single_free_queue;
  return s;
}

AdmitRequest request(SeqId seq, std::int64_t prompt_tokens, std::int64_t output_tokens) {
  AdmitRequest r;
  r.seq = seq;
  r.prompt_tokens = prompt_tokens;
  r.output_tokens = output_tokens;
  return r;
}

TEST(ProposedSlotsRandom, PlainPool) { run(pool(64, 4, 0, false, false), 1); }
TEST(ProposedSlotsRandom, PrefixCacheOneFreeQueue) {
  run(pool(96, 8, 0, true, true), 2);
}
TEST(ProposedSlotsRandom, PrefixCacheWithSwapping) {
  run(pool(48, 4, 32, true, false), 3);
}
TEST(ProposedSlotsRandom, BlockSizeOne) { run(pool(200, 1, 0, true, false), 4); }

// Verification rewinds by the blocks' fills: a pool that has kept no entries yet (no prefix
// cache, no fork or swap before) writes them at the first proposal. Here the rewound last
// block is one an earlier sequence left, with its stale entry.
TEST(ProposedSlots, VerifyRewindsByTheTablesFillsInAPoolThatKeptNoEntries) {
  PagedAllocator a(pool(16, 4, 0, false, false));
  ASSERT_TRUE(a.admit(request(1, 15, 8)).admitted);  // 4 blocks, the last with 3 tokens
  a.free(1);
  ASSERT_TRUE(a.admit(request(2, 6, 8)).admitted);  // 1's first two blocks, entries unwritten: 4 + 2
  const SeqHandle h = a.handle(2);
  // The newest token and a proposal fill the last block, the rest take a new one: 4 + 4 + 2.
  ASSERT_TRUE(a.grow_proposed(h, {.proposed = 2, .rejected = 2, .lookahead = 1}));
  a.validate();
  a.verify_proposed(h);  // drops 3: the new block and one token of the old last block
  EXPECT_EQ(a.sequence_tokens(2), 7);
  EXPECT_EQ(a.block_table(2).size(), 2u);
  EXPECT_EQ(a.breakdown().token_states, 7);
  a.validate();
}

// Misuse is refused with AllocatorError, changing nothing.
TEST(ProposedSlots, MisuseIsRefused) {
  PagedAllocator a(pool(16, 4, 0, false, false));
  ASSERT_TRUE(a.admit(request(1, 5, 8)).admitted);
  const SeqHandle h = a.handle(1);
  EXPECT_THROW(a.grow_proposed(h, {.proposed = 2, .rejected = 3}), AllocatorError);
  EXPECT_THROW(a.grow_proposed(h, {.proposed = -1}), AllocatorError);
  ASSERT_TRUE(a.grow_proposed(h, {.proposed = 3, .rejected = 1, .lookahead = 3}));
  EXPECT_THROW(a.grow(h, 1), AllocatorError);
  EXPECT_THROW(a.grow_proposed(h, {.proposed = 1}), AllocatorError);
  EXPECT_THROW(a.fork(1, 2), AllocatorError);
  const SeqId id = 1;
  EXPECT_THROW(a.swap_out(std::span<const SeqId>(&id, 1)), AllocatorError);
  a.validate();
  const MemoryBreakdown b = a.breakdown();
  EXPECT_EQ(b.token_states, 6);  // prompt + the newest token
  EXPECT_EQ(b.proposed_accepted, 2);
  EXPECT_EQ(b.proposed_rejected, 1);
  EXPECT_EQ(b.lookahead, 3);
  EXPECT_EQ(a.sequence_tokens(1), 12);  // 3 blocks of 4
  a.verify_proposed(h);
  EXPECT_EQ(a.sequence_tokens(1), 8);  // prompt + newest + 2 accepted: blocks 3 -> 2
  EXPECT_EQ(a.breakdown().token_states, 8);
  EXPECT_EQ(a.breakdown().rounding, 0);
  EXPECT_EQ(a.breakdown().free, 14 * 4);
  a.validate();
}

}  // namespace
}  // namespace pagesim::alloc

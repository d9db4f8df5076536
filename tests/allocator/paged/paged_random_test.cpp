// Randomized, model-based test of PagedAllocator: >= 100,000 seeded operations per
// configuration, validate() after every one. Appends go by id or, for odd ids, by the
// handle taken at admission or fork (the scheduler's per-token path), which must stay valid
// through swaps. A shadow copy of every physical block's
// content (one identity per token) follows the allocator's copy-on-write copies and swap
// moves, so a missed copy, a wrong block table or a bad prefix hit shows up as a token
// whose slot holds another token's identity.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <vector>

#include "allocator/pool/block_hash.h"
#include "document_hashes.h"
#include "allocator/paged/paged_allocator.h"

namespace pagesim::alloc {
namespace {

using Ident = std::int64_t;

std::int64_t op_count() {
  const char* env = std::getenv("PAGESIM_RANDOM_OPS");
  return env ? std::atoll(env) : 100000;
}

class PagedShadow {
 public:
  explicit PagedShadow(const PagedAllocatorSettings& s)
      : a_(s), bs_(s.block_size),
        gpu_(static_cast<std::size_t>(s.num_blocks), std::vector<Ident>(s.block_size, -1)),
        cpu_(static_cast<std::size_t>(s.num_cpu_blocks), std::vector<Ident>(s.block_size, -1)) {}

  PagedAllocator& alloc() { return a_; }

  // The chained hashes of the full blocks of document `doc`'s first `prompt` tokens.
  std::vector<BlockHash> doc_hashes(std::int64_t doc, std::int64_t prompt) const {
    return test_support::document_block_hashes(doc, prompt, bs_);
  }

  // A prompt drawn from one of a few documents, so prefixes repeat across requests.
  void admit(SeqId id, std::int64_t doc, std::int64_t prompt, std::int64_t output, std::int64_t generated) {
    std::vector<Ident> ident;
    for (std::int64_t i = 0; i < prompt; ++i) ident.push_back(doc * 1'000'000 + i);
    for (std::int64_t i = 0; i < generated; ++i) ident.push_back(fresh_--);
    const std::vector<BlockHash> hashes = doc_hashes(doc, prompt);
    AdmitRequest r;
    r.seq = id;
    r.prompt_tokens = prompt;
    r.output_tokens = output;
    r.generated_tokens = generated;
    if (doc >= 0) r.prompt_block_hashes = hashes;
    bool could = a_.can_admit(r);
    std::int64_t before = a_.num_free_blocks(), cost = a_.blocks_to_admit(r);
    AdmitResult res = a_.admit(r);
    ASSERT_EQ(could, res.admitted);
    ++(res.admitted ? counts.admits : counts.admit_failures);
    counts.hit_tokens += res.cached_tokens;
    if (!res.admitted) {
      ASSERT_FALSE(a_.contains(id));
      return;
    }
    ASSERT_EQ(a_.num_free_blocks(), before - cost);
    handles_[id] = a_.handle(id);
    // Cached tokens must already hold exactly this prompt's identities.
    auto table = a_.block_table(id);
    for (std::int64_t i = 0; i < res.cached_tokens; ++i)
      ASSERT_EQ(gpu_[table[i / bs_]][i % bs_], ident[i]) << "bad prefix hit at token " << i;
    for (std::size_t i = static_cast<std::size_t>(res.cached_tokens); i < ident.size(); ++i)
      gpu_[table[i / bs_]][i % bs_] = ident[i];
    idents_[id] = std::move(ident);
  }

  void append(SeqId id, std::int64_t n) {
    bool could = a_.can_append(id, n);
    std::int64_t before = a_.num_free_blocks(), cost = a_.blocks_to_append(id, n);
    ASSERT_EQ(a_.handle(id), handles_.at(id)) << "a handle changed while its sequence lived";
    bool ok = id % 2 ? a_.grow(handles_.at(id), n) : a_.append(id, n);
    ASSERT_EQ(could, ok);
    ++(ok ? counts.appends : counts.append_failures);
    if (!ok) {
      ASSERT_EQ(a_.sequence_tokens(id), static_cast<std::int64_t>(idents_[id].size()));
      return;
    }
    ASSERT_EQ(a_.num_free_blocks(), before - cost);
    for (const BlockMove& m : a_.take_pending_copies()) {
      gpu_[m.dst] = gpu_[m.src];
      ++counts.cow_copies;
    }
    auto& ident = idents_[id];
    auto table = a_.block_table(id);
    for (std::int64_t i = 0; i < n; ++i) {
      std::size_t pos = ident.size();
      ident.push_back(fresh_--);
      gpu_[table[pos / bs_]][pos % bs_] = ident.back();
    }
  }

  void fork(SeqId parent, SeqId child) {
    ASSERT_TRUE(a_.fork(parent, child));
    handles_[child] = a_.handle(child);
    idents_[child] = idents_[parent];
  }

  void free(SeqId id) {
    a_.free(id);
    idents_.erase(id);
    ASSERT_THROW(a_.grow(handles_.at(id), 1), AllocatorError) << "the handle of a freed sequence";
    handles_.erase(id);
  }

  // A waiting request with document doc's prompt joins (hold) or leaves (release) the queue.
  void hold(std::int64_t doc, std::int64_t prompt) {
    waiting_.push_back(doc_hashes(doc, prompt));
    a_.hold_pending_prefix(waiting_.back());
    ++counts.holds;
  }
  void release(std::size_t i) {
    a_.release_pending_prefix(waiting_[i]);
    waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(i));
  }
  std::size_t num_waiting() const { return waiting_.size(); }

  void swap_out(const std::vector<SeqId>& group) {
    auto moves = a_.swap_out(group);
    if (!moves) return;
    ++counts.swap_outs;
    for (const BlockMove& m : *moves) cpu_[m.dst] = gpu_[m.src];
  }

  void swap_in(const std::vector<SeqId>& group) {
    bool could = a_.can_swap_in(group);
    auto moves = a_.swap_in(group);
    ASSERT_EQ(could, moves.has_value());
    if (!moves) return;
    ++counts.swap_ins;
    for (const BlockMove& m : *moves) gpu_[m.dst] = cpu_[m.src];
  }

  // Every token of every sequence is found in the slot its block table points to.
  void check_contents() {
    for (const auto& [id, ident] : idents_) {
      auto table = a_.block_table(id);
      const auto& pool = a_.is_swapped(id) ? cpu_ : gpu_;
      ASSERT_EQ(a_.sequence_tokens(id), static_cast<std::int64_t>(ident.size()));
      for (std::size_t i = 0; i < ident.size(); ++i)
        ASSERT_EQ(pool[table[i / bs_]][i % bs_], ident[i]) << "sequence " << id << " token " << i;
    }
  }

  const std::map<SeqId, std::vector<Ident>>& live() const { return idents_; }

  // What the run exercised; the test asserts each path was taken.
  struct {
    std::int64_t admits = 0, admit_failures = 0, appends = 0, append_failures = 0;
    std::int64_t cow_copies = 0, swap_outs = 0, swap_ins = 0, hit_tokens = 0, holds = 0;
  } counts;

 private:
  PagedAllocator a_;
  std::int64_t bs_;
  std::vector<std::vector<Ident>> gpu_, cpu_;
  std::map<SeqId, std::vector<Ident>> idents_;
  std::map<SeqId, SeqHandle> handles_;
  std::vector<std::vector<BlockHash>> waiting_;  // prompt hashes of the simulated waiting queue
  Ident fresh_ = -2;
};

void run_random(const PagedAllocatorSettings& s, std::uint64_t seed) {
  PagedShadow sh(s);
  std::mt19937_64 rng(seed);
  auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  SeqId next_id = 1;
  const std::int64_t ops = op_count();
  for (std::int64_t op = 0; op < ops; ++op) {
    const auto& live = sh.live();
    auto random_live = [&]() {
      auto it = live.begin();
      std::advance(it, pick(0, static_cast<std::int64_t>(live.size()) - 1));
      return it->first;
    };
    // Keep the pool cycling between pressure and slack: free more when it is nearly full
    // or when many sequences are live, so every path (failures included) keeps being hit.
    std::int64_t kind = pick(0, 99);
    const bool crowded = static_cast<std::int64_t>(live.size()) > 48 ||
                         sh.alloc().num_free_blocks() < sh.alloc().num_blocks() / 16;
    if (crowded && kind < 15) kind = 80;  // free
    if (live.empty() || kind < 25) {
      std::int64_t doc = pick(-1, 5);  // -1: no prefix caching for this request
      sh.admit(next_id++, doc, pick(1, 6 * s.block_size), pick(0, 40), pick(0, 9) == 0 ? pick(1, 20) : 0);
    } else if (kind < 65) {
      SeqId id = random_live();
      if (!sh.alloc().is_swapped(id)) sh.append(id, pick(1, 3) == 1 ? pick(1, 2 * s.block_size) : 1);
    } else if (kind < 75) {
      SeqId id = random_live();
      if (!sh.alloc().is_swapped(id)) sh.fork(id, next_id++);
    } else if (kind < 90) {
      sh.free(random_live());
    } else if (kind < 95 && s.eviction == EvictionKind::kLruProtectWaiting) {
      // The waiting queue changes: a prompt joins, or a random waiting one leaves.
      if (sh.num_waiting() < 8 && (sh.num_waiting() == 0 || pick(0, 1) == 0))
        sh.hold(pick(0, 5), pick(1, 6 * s.block_size));
      else
        sh.release(static_cast<std::size_t>(pick(0, static_cast<std::int64_t>(sh.num_waiting()) - 1)));
    } else if (s.num_cpu_blocks > 0) {
      SeqId id = random_live();
      std::vector<SeqId> group{id};
      if (sh.alloc().is_swapped(id)) sh.swap_in(group); else sh.swap_out(group);
    }
    if (::testing::Test::HasFatalFailure()) return;
    ASSERT_NO_THROW(sh.alloc().validate()) << "after operation " << op;
    MemoryBreakdown b = sh.alloc().breakdown();
    ASSERT_EQ(b.total(), sh.alloc().capacity_slots());
    ASSERT_EQ(b.reserved + b.over_reserved, 0);
    if (op % 97 == 0) {
      sh.check_contents();
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  sh.check_contents();
  const auto& c = sh.counts;
  std::printf("admits %lld (failed %lld), appends %lld (failed %lld), cow %lld, swap out/in %lld/%lld, "
              "prefix hit tokens %lld, evictions %lld\n",
              (long long)c.admits, (long long)c.admit_failures, (long long)c.appends,
              (long long)c.append_failures, (long long)c.cow_copies, (long long)c.swap_outs,
              (long long)c.swap_ins, (long long)c.hit_tokens, (long long)sh.alloc().stats().prefix.evictions);
  if (ops < 10000) return;  // a shortened run (PAGESIM_RANDOM_OPS) need not reach every path
  EXPECT_GT(c.admits, ops / 20);
  EXPECT_GT(c.admit_failures, 0);
  EXPECT_GT(c.appends, ops / 10);
  EXPECT_GT(c.append_failures, 0);
  if (s.block_size > 1) {  // braces: EXPECT_GT expands to an if/else (GCC -Wdangling-else)
    EXPECT_GT(c.cow_copies, 0);  // a 1-slot block is never partly filled
  }
  if (s.num_cpu_blocks > 0) {
    EXPECT_GT(c.swap_outs, 0);
    EXPECT_GT(c.swap_ins, 0);
  }
  if (s.eviction == EvictionKind::kLruProtectWaiting) {
    EXPECT_GT(c.holds, ops / 50);
  }
  if (s.prefix_cache) {
    EXPECT_GT(c.hit_tokens, 0);
    EXPECT_GT(sh.alloc().stats().prefix.evictions, 0);
  }
}

TEST(PagedRandom, PlainPoolWithForksAndSwaps) {
  PagedAllocatorSettings s;
  s.num_blocks = 96;
  s.block_size = 4;
  s.num_cpu_blocks = 48;
  run_random(s, 1);
}

TEST(PagedRandom, Block16) {
  PagedAllocatorSettings s;
  s.num_blocks = 64;
  s.block_size = 16;
  s.num_cpu_blocks = 16;
  run_random(s, 2);
}

TEST(PagedRandom, PrefixCacheLru) {
  PagedAllocatorSettings s;
  s.num_blocks = 96;
  s.block_size = 4;
  s.num_cpu_blocks = 32;
  s.prefix_cache = true;
  run_random(s, 3);
}

TEST(PagedRandom, PrefixCacheFifoBlockSize1) {
  PagedAllocatorSettings s;
  s.num_blocks = 200;
  s.block_size = 1;
  s.prefix_cache = true;
  s.eviction = EvictionKind::kFifo;
  run_random(s, 4);
}

TEST(PagedRandom, PrefixCacheLfu) {
  PagedAllocatorSettings s;
  s.num_blocks = 96;
  s.block_size = 4;
  s.num_cpu_blocks = 32;
  s.prefix_cache = true;
  s.eviction = EvictionKind::kLfu;
  run_random(s, 5);
}

// vLLM v1's single free-block queue: never-cached and evictable cached blocks handed out in
// release order, with and without the prefix cache.
TEST(PagedRandom, SingleFreeQueuePrefixCacheLru) {
  PagedAllocatorSettings s;
  s.num_blocks = 96;
  s.block_size = 4;
  s.num_cpu_blocks = 32;
  s.prefix_cache = true;
  s.single_free_queue = true;
  run_random(s, 7);
}

TEST(PagedRandom, SingleFreeQueueNoCache) {
  PagedAllocatorSettings s;
  s.num_blocks = 64;
  s.block_size = 16;
  s.num_cpu_blocks = 16;
  s.single_free_queue = true;
  run_random(s, 8);
}

// Random holds and releases of the waiting queue's prompt hashes between the operations;
// validate() checks after each that exactly the cached blocks whose hash is held are
// protected.
TEST(PagedRandom, PrefixCacheLruProtectWaiting) {
  PagedAllocatorSettings s;
  s.num_blocks = 96;
  s.block_size = 4;
  s.num_cpu_blocks = 32;
  s.prefix_cache = true;
  s.eviction = EvictionKind::kLruProtectWaiting;
  run_random(s, 6);
}

}  // namespace
}  // namespace pagesim::alloc

// Randomized, model-based test of the heterogeneous allocators (uniform, hybrid, jenga
// layouts over GroupedKvAllocator, some with vLLM v1's one free-block queue): seeded
// operations per configuration, validate() after every one. A shadow copy of every page's
// content (one identity per token slot, one per state page) follows the copy-on-write and
// state copies, so a wrong table, a page dropped while still in a window, or a bad prefix hit
// shows up as a slot holding another token.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "allocator/hetero/grouped_kv_allocator.h"
#include "allocator/hetero/kv_layout.h"
#include "allocator/pool/block_hash.h"
#include "document_hashes.h"

namespace pagesim::alloc {
namespace {

using Ident = std::int64_t;

std::int64_t op_count() {
  const char* env = std::getenv("PAGESIM_RANDOM_OPS");
  return env ? std::atoll(env) : 30000;
}

struct Config {
  LayerGroups groups;
  std::int64_t pool_bytes = 0;
  std::int32_t block_size = 4;
  bool prefix_cache = false;
  EvictionKind eviction = EvictionKind::kLru;
  bool single_free_queue = false;  // vLLM v1's one free-block queue (one page size only)
  KvLayout (*layout)(const LayerGroups&, std::int64_t, std::int32_t) = nullptr;
};

class Shadow {
  struct Seq {
    std::vector<Ident> tokens, pending, encoder;
    Ident state = 0;
    std::vector<BlockHash> hashes;  // of a prompt drawn from a document; else empty
  };

 public:
  explicit Shadow(const Config& c)
      : a_(c.groups, c.layout(c.groups, c.pool_bytes, c.block_size), c.prefix_cache, c.eviction, c.single_free_queue),
        bs_(a_.block_size()),
        pages_(static_cast<std::size_t>(a_.pool().id_space()), std::vector<Ident>(static_cast<std::size_t>(bs_), 0)) {}

  GroupedKvAllocator& alloc() { return a_; }

  std::vector<BlockHash> doc_hashes(std::int64_t doc, std::int64_t prompt) const {
    return test_support::document_block_hashes(doc, prompt, bs_);
  }

  void admit(SeqId id, std::int64_t doc, std::int64_t prompt, std::int64_t output, std::int64_t encoder,
             std::int64_t chunk) {
    Seq seq;
    for (std::int64_t i = 0; i < prompt; ++i) seq.tokens.push_back(doc >= 0 ? doc * 1'000'000 + i : fresh_--);
    for (std::int64_t i = 0; i < encoder; ++i) seq.encoder.push_back(fresh_--);
    seq.state = fresh_--;
    const std::vector<BlockHash> hashes = doc_hashes(doc, prompt);
    if (doc >= 0) seq.hashes = hashes;
    AdmitRequest r;
    r.seq = id;
    r.prompt_tokens = prompt;
    r.output_tokens = output;
    r.encoder_tokens = encoder;
    r.max_new_tokens = chunk;
    if (doc >= 0) r.prompt_block_hashes = hashes;
    const bool could = a_.can_admit(r);
    const AdmitResult res = a_.admit(r);
    ASSERT_EQ(could, res.admitted);
    ++(res.admitted ? counts.admits : counts.admit_failures);
    if (!res.admitted) {
      ASSERT_FALSE(a_.contains(id));
      return;
    }
    counts.hit_tokens += res.cached_tokens;
    ASSERT_EQ(a_.sequence_tokens(id), res.held_tokens);
    seq.pending.assign(seq.tokens.begin() + res.held_tokens, seq.tokens.end());
    seq.tokens.resize(static_cast<std::size_t>(res.held_tokens));
    // Cached tokens must already hold this prompt's identities in every table that holds them.
    write(id, seq, res.cached_tokens, /*check_below=*/true);
    if (::testing::Test::HasFatalFailure()) return;
    fill_dropped(id, seq);
    seqs_[id] = std::move(seq);
  }

  void append(SeqId id, std::int64_t n) {
    Seq& seq = seqs_[id];
    // The rest of a chunked prompt first, then generated tokens.
    const bool could = a_.can_append(id, n);
    const bool ok = a_.append(id, n);
    ASSERT_EQ(could, ok);
    ++(ok ? counts.appends : counts.append_failures);
    if (!ok) {
      ASSERT_EQ(a_.sequence_tokens(id), static_cast<std::int64_t>(seq.tokens.size()));
      return;
    }
    apply_copies();
    const auto before = static_cast<std::int64_t>(seq.tokens.size());
    for (std::int64_t i = 0; i < n; ++i) {
      if (!seq.pending.empty()) {
        seq.tokens.push_back(seq.pending.front());
        seq.pending.erase(seq.pending.begin());
      } else {
        seq.tokens.push_back(fresh_--);
      }
    }
    write(id, seq, before, /*check_below=*/false);
    fill_dropped(id, seq);
  }

  void fork(SeqId parent, SeqId child) {
    const bool ok = a_.fork(parent, child);
    ++(ok ? counts.forks : counts.fork_failures);
    if (!ok) return;
    apply_copies();
    seqs_[child] = seqs_[parent];
  }

  void free(SeqId id) {
    a_.free(id);
    seqs_.erase(id);
  }

  // Every held slot of every table holds the identity the sequence expects.
  void check_contents() {
    for (const auto& [id, seq] : seqs_) {
      ASSERT_EQ(a_.sequence_tokens(id), static_cast<std::int64_t>(seq.tokens.size()));
      for (std::size_t t = 0; t < a_.layout().tables.size(); ++t) {
        const TableGroup& tg = a_.layout().tables[t];
        const auto& tab = a_.table(id, static_cast<std::int32_t>(t));
        for (std::size_t i = 0; i < tab.size(); ++i) {
          if (tab[i] == kNoBlock) continue;
          const auto& page = pages_[static_cast<std::size_t>(tab[i])];
          if (tg.kind == TableKind::kState) {
            ASSERT_EQ(page[0], seq.state) << "sequence " << id << " state page " << i;
            continue;
          }
          const auto& want = tg.kind == TableKind::kTokens ? seq.tokens : seq.encoder;
          for (std::size_t j = 0; j < static_cast<std::size_t>(bs_) && i * bs_ + j < want.size(); ++j)
            ASSERT_EQ(page[j], want[i * bs_ + j]) << "sequence " << id << " table " << t << " token " << i * bs_ + j;
        }
      }
    }
  }

  const std::map<SeqId, Seq>& live() const { return seqs_; }

  struct {
    std::int64_t admits = 0, admit_failures = 0, appends = 0, append_failures = 0, forks = 0, fork_failures = 0;
    std::int64_t cow_copies = 0, hit_tokens = 0;
  } counts;

 private:
  // A windowed table takes pages for a whole prefill chunk, caches its full prompt pages and
  // drops those out of the window in the same call: their KV was computed, but the shadow
  // never saw them. Write the prompt's identities into the cached pages the sequence no
  // longer holds (held ones were written and are checked by check_contents).
  void fill_dropped(SeqId id, const Seq& seq) {
    const std::size_t full = std::min(seq.hashes.size(), seq.tokens.size() / static_cast<std::size_t>(bs_));
    for (std::size_t t = 0; t < a_.layout().tables.size(); ++t) {
      if (a_.layout().tables[t].kind != TableKind::kTokens) continue;
      const auto& tab = a_.table(id, static_cast<std::int32_t>(t));
      for (std::size_t i = 0; i < full; ++i) {
        const BlockId p = a_.pool().lookup(static_cast<std::int32_t>(t), seq.hashes[i]);
        if (p == kNoBlock || tab[i] != kNoBlock || a_.pool().ref_count(p) != 0) continue;
        for (std::size_t j = 0; j < static_cast<std::size_t>(bs_); ++j)
          pages_[static_cast<std::size_t>(p)][j] = seq.tokens[i * static_cast<std::size_t>(bs_) + j];
      }
    }
  }

  void apply_copies() {
    for (const BlockMove& m : a_.take_pending_copies()) {
      pages_[static_cast<std::size_t>(m.dst)] = pages_[static_cast<std::size_t>(m.src)];
      ++counts.cow_copies;
    }
  }

  // Writes the identities of tokens [from, end) (and, at admission, the encoder tokens and
  // the state) into the pages the tables hold; check_below: tokens [0, from) are checked.
  void write(SeqId id, const Seq& seq, std::int64_t from, bool check_below) {
    for (std::size_t t = 0; t < a_.layout().tables.size(); ++t) {
      const TableGroup& tg = a_.layout().tables[t];
      const auto& tab = a_.table(id, static_cast<std::int32_t>(t));
      if (tg.kind == TableKind::kState) {
        if (check_below) for (BlockId p : tab) pages_[static_cast<std::size_t>(p)][0] = seq.state;
        continue;
      }
      if (tg.kind == TableKind::kEncoder) {
        if (!check_below) continue;
        for (std::size_t i = 0; i < seq.encoder.size(); ++i)
          pages_[static_cast<std::size_t>(tab[i / static_cast<std::size_t>(bs_)])][i % static_cast<std::size_t>(bs_)] =
              seq.encoder[i];
        continue;
      }
      for (std::size_t i = 0; i < seq.tokens.size(); ++i) {
        const BlockId p = tab[i / static_cast<std::size_t>(bs_)];
        if (p == kNoBlock) continue;
        Ident& slot = pages_[static_cast<std::size_t>(p)][i % static_cast<std::size_t>(bs_)];
        if (static_cast<std::int64_t>(i) < from) {
          if (check_below) {
            ASSERT_EQ(slot, seq.tokens[i]) << "bad prefix hit in table " << t << " at token " << i;
          }
        } else {
          slot = seq.tokens[i];
        }
      }
    }
  }

  GroupedKvAllocator a_;
  std::int64_t bs_;
  std::vector<std::vector<Ident>> pages_;
  std::map<SeqId, Seq> seqs_;
  Ident fresh_ = -2;
};

void run_random(const Config& c, std::uint64_t seed) {
  Shadow sh(c);
  std::mt19937_64 rng(seed);
  auto pick = [&](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); };
  const std::int64_t B = sh.alloc().block_size();
  bool cross = false;
  for (const LayerGroup& g : c.groups) cross = cross || g.kind == LayerGroupKind::kCrossAttention;
  SeqId next_id = 1;
  const std::int64_t ops = op_count();
  for (std::int64_t op = 0; op < ops; ++op) {
    const auto& live = sh.live();
    auto random_live = [&]() {
      auto it = live.begin();
      std::advance(it, pick(0, static_cast<std::int64_t>(live.size()) - 1));
      return it->first;
    };
    std::int64_t kind = pick(0, 99);
    const MemoryBreakdown now = sh.alloc().breakdown();
    const bool crowded = static_cast<std::int64_t>(live.size()) > 40 || now.free - now.cached_free < now.total() / 16;
    if (crowded && kind < 15) kind = 80;
    if (live.empty() || kind < 25) {
      const std::int64_t chunk = pick(0, 3) == 0 ? pick(1, 3 * B) : std::numeric_limits<std::int64_t>::max();
      sh.admit(next_id++, pick(-1, 5), pick(1, 8 * B), pick(0, 40), cross && pick(0, 1) ? pick(1, 3 * B) : 0, chunk);
    } else if (kind < 70) {
      sh.append(random_live(), pick(1, 3) == 1 ? pick(1, 3 * B) : 1);
    } else if (kind < 78) {
      sh.fork(random_live(), next_id++);
    } else {
      sh.free(random_live());
    }
    if (::testing::Test::HasFatalFailure()) return;
    ASSERT_NO_THROW(sh.alloc().validate()) << "after operation " << op;
    const MemoryBreakdown b = sh.alloc().breakdown();
    ASSERT_EQ(b.total(), sh.alloc().capacity_bytes());
    ASSERT_EQ(b.reserved + b.over_reserved, 0);
    if (op % 53 == 0) {
      sh.check_contents();
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  sh.check_contents();
  const auto& n = sh.counts;
  std::printf("%s: admits %lld (failed %lld), appends %lld (failed %lld), forks %lld (failed %lld), copies %lld, "
              "hit tokens %lld, evictions %lld\n",
              sh.alloc().name().c_str(), (long long)n.admits, (long long)n.admit_failures, (long long)n.appends,
              (long long)n.append_failures, (long long)n.forks, (long long)n.fork_failures, (long long)n.cow_copies,
              (long long)n.hit_tokens, (long long)sh.alloc().stats().prefix.evictions);
  if (ops < 10000) return;  // a shortened run (PAGESIM_RANDOM_OPS) need not reach every path
  EXPECT_GT(n.admits, ops / 20);
  EXPECT_GT(n.admit_failures, 0);
  EXPECT_GT(n.appends, ops / 10);
  EXPECT_GT(n.append_failures, 0);
  EXPECT_GT(n.cow_copies, 0);
  bool state = false;
  for (const LayerGroup& g : c.groups) state = state || g.kind == LayerGroupKind::kRecurrent;
  if (c.prefix_cache && !state) {
    EXPECT_GT(n.hit_tokens, 0);
    EXPECT_GT(sh.alloc().stats().prefix.evictions, 0);
  }
}

LayerGroup full(std::int32_t layers, std::int64_t per_layer) {
  return {.kind = LayerGroupKind::kFull, .layers = layers, .kv_bytes_per_token = layers * per_layer};
}
LayerGroup sliding(std::int32_t layers, std::int64_t per_layer, std::int64_t w) {
  return {.kind = LayerGroupKind::kSlidingWindow, .layers = layers, .kv_bytes_per_token = layers * per_layer,
          .window_tokens = w};
}
LayerGroup chunked(std::int32_t layers, std::int64_t per_layer, std::int64_t c) {
  return {.kind = LayerGroupKind::kChunkedLocal, .layers = layers, .kv_bytes_per_token = layers * per_layer,
          .window_tokens = c};
}
LayerGroup cross_attention(std::int32_t layers, std::int64_t per_layer) {
  return {.kind = LayerGroupKind::kCrossAttention, .layers = layers, .kv_bytes_per_token = layers * per_layer};
}
LayerGroup recurrent(std::int32_t layers, std::int64_t state_per_layer) {
  return {.kind = LayerGroupKind::kRecurrent, .layers = layers, .state_bytes = layers * state_per_layer};
}

TEST(GroupedRandom, UniformEveryKind) {
  Config c;
  c.groups = {full(2, 8), sliding(2, 8, 6), cross_attention(1, 8), recurrent(1, 40)};
  c.pool_bytes = 96 * 4 * 48;  // 96 pages of 4 tokens * 48 bytes
  c.layout = uniform_layout;
  run_random(c, 11);
}

TEST(GroupedRandom, UniformPrefixCache) {
  Config c;
  c.groups = {full(1, 8), sliding(3, 8, 9)};
  c.pool_bytes = 96 * 4 * 32;
  c.prefix_cache = true;
  c.layout = uniform_layout;
  run_random(c, 12);
}

TEST(GroupedRandom, HybridSlidingFivetoOne) {
  Config c;
  c.groups = {sliding(5, 8, 7), full(1, 8)};  // group_size 1: six tables
  c.pool_bytes = 220 * 4 * 8;
  c.prefix_cache = true;
  c.layout = hybrid_layout;
  run_random(c, 13);
}

TEST(GroupedRandom, HybridChunkedCrossFifo) {
  Config c;
  c.groups = {chunked(3, 8, 8), full(2, 8), cross_attention(2, 8)};
  c.pool_bytes = 160 * 4 * 16;
  c.prefix_cache = true;
  c.eviction = EvictionKind::kFifo;
  c.layout = hybrid_layout;
  run_random(c, 14);
}

TEST(GroupedRandom, HybridRecurrent) {
  Config c;
  c.groups = {full(2, 8), recurrent(2, 100)};  // the block grows to 16 tokens
  c.pool_bytes = 64 * 16 * 8 * 2;
  c.prefix_cache = true;
  c.layout = hybrid_layout;
  run_random(c, 15);
}

TEST(GroupedRandom, HybridSlidingOneFreeQueue) {
  Config c;
  c.groups = {sliding(5, 8, 7), full(1, 8)};
  c.pool_bytes = 220 * 4 * 8;
  c.prefix_cache = true;
  c.single_free_queue = true;
  c.layout = hybrid_layout;
  run_random(c, 19);
}

TEST(GroupedRandom, UniformCrossOneFreeQueueLfu) {
  Config c;
  c.groups = {full(2, 8), sliding(2, 8, 6), cross_attention(1, 8)};
  c.pool_bytes = 96 * 4 * 40;
  c.prefix_cache = true;
  c.eviction = EvictionKind::kLfu;
  c.single_free_queue = true;
  c.layout = uniform_layout;
  run_random(c, 20);
}

TEST(GroupedRandom, JengaOnePageSizeOneFreeQueue) {
  Config c;
  c.groups = {full(1, 8), sliding(1, 8, 9), chunked(1, 8, 8)};  // pages of 32 bytes: large pages of one
  c.pool_bytes = 150 * 32;
  c.prefix_cache = true;
  c.eviction = EvictionKind::kFifo;
  c.single_free_queue = true;
  c.layout = jenga_layout;
  run_random(c, 21);
}

TEST(GroupedRandom, JengaEveryKind) {
  Config c;
  // Pages of 24, 16, 16, 24 and 40 bytes: large pages of 240 split 10, 15, 15, 10, 6 ways.
  c.groups = {full(1, 6), sliding(1, 4, 9), chunked(1, 4, 8), cross_attention(1, 6), recurrent(1, 40)};
  c.pool_bytes = 24 * 240;
  c.layout = jenga_layout;
  run_random(c, 16);
}

TEST(GroupedRandom, JengaPrefixLru) {
  Config c;
  c.groups = {full(1, 6), sliding(2, 2, 9), chunked(1, 4, 8)};  // pages 24, 16, 16: large 48
  c.pool_bytes = 60 * 48;
  c.prefix_cache = true;
  c.layout = jenga_layout;
  run_random(c, 17);
}

TEST(GroupedRandom, JengaPrefixLfu) {
  Config c;
  c.groups = {full(1, 6), sliding(1, 4, 5)};
  c.pool_bytes = 70 * 48;
  c.prefix_cache = true;
  c.eviction = EvictionKind::kLfu;
  c.layout = jenga_layout;
  run_random(c, 18);
}

}  // namespace
}  // namespace pagesim::alloc

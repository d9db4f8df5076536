// Randomized property tests of VattentionAllocator: seeded random admit / append / fork / free
// (failures and misuse included) against an independent model of what each call must do —
// pages from the layer groups' sizes, the slot limit, classes in bytes, the best-fit slot.
// validate() (a full scan: pages mapped = sum over slots, counters = recomputation, classes
// partition capacity) runs after every operation.
//
// PAGESIM_VATTENTION_RANDOM_OPS sets the operations per case (default 50,000).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <ostream>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "allocator/allocator_error.h"
#include "refused_misuse.h"
#include "allocator/vattention/vattention_allocator.h"

namespace pagesim::alloc {
namespace {

constexpr std::int64_t kPage = 4096;
constexpr std::int64_t kMaxSeqLen = 256;
constexpr std::int64_t kSlots = 24;

std::int64_t random_ops() {
  if (const char* env = std::getenv("PAGESIM_VATTENTION_RANDOM_OPS")) return std::max<std::int64_t>(1, std::atoll(env));
  return 50'000;
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

struct Case {
  const char* name;
  LayerGroups groups;
  std::int64_t pool_pages;
  bool deferred;
  std::uint64_t seed;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }
std::string case_name(const testing::TestParamInfo<Case>& param) { return param.param.name; }

// One full-attention group: 2 layers, 1 KiB per buffer and token (4 tokens a page).
LayerGroups uniform_model() {
  return {{.kind = LayerGroupKind::kFull, .layers = 2, .kv_bytes_per_token = 4096}};
}

// Every kind, with a token size that does not divide the page (1,536 B per buffer).
LayerGroups mixed_model() {
  return {
      {.kind = LayerGroupKind::kFull, .layers = 1, .kv_bytes_per_token = 2 * 1536},
      {.kind = LayerGroupKind::kSlidingWindow, .layers = 2, .kv_bytes_per_token = 4 * 1024, .window_tokens = 24},
      {.kind = LayerGroupKind::kChunkedLocal, .layers = 1, .kv_bytes_per_token = 2 * 512, .window_tokens = 16},
      {.kind = LayerGroupKind::kCrossAttention, .layers = 1, .kv_bytes_per_token = 2 * 256, .encoder_tokens = 40},
      {.kind = LayerGroupKind::kRecurrent, .layers = 2, .state_bytes = 2 * 6000},
  };
}

// What the test expects of a request of `tokens` tokens, from the groups' sizes alone.
struct Expected {
  std::int64_t pages = 0;
  MemoryBreakdown classes;
};

Expected expect(const LayerGroups& groups, std::int64_t tokens) {
  Expected e;
  for (const LayerGroup& g : groups) {
    std::int64_t pages = 0;
    std::int64_t held = 0;
    if (g.kind == LayerGroupKind::kRecurrent) {
      pages = g.layers * ceil_div(g.state_bytes / g.layers, kPage);
      held = g.state_bytes;
      e.classes.recurrent_state += held;
    } else {
      const std::int64_t per_buffer = g.kv_bytes_per_token / (2 * g.layers);
      const std::int64_t keys = g.kind == LayerGroupKind::kCrossAttention ? g.encoder_tokens : tokens;
      pages = 2 * g.layers * ceil_div(keys * per_buffer, kPage);
      held = keys * g.kv_bytes_per_token;
      std::int64_t out = 0;
      if (g.kind == LayerGroupKind::kSlidingWindow) out = std::max<std::int64_t>(0, tokens - (g.window_tokens - 1));
      if (g.kind == LayerGroupKind::kChunkedLocal) out = tokens - tokens % g.window_tokens;
      e.classes.out_of_window += out * g.kv_bytes_per_token;
      e.classes.token_states += held - out * g.kv_bytes_per_token;
    }
    e.classes.rounding += pages * kPage - held;
    e.pages += pages;
  }
  return e;
}

struct ModelSeq {
  std::int64_t tokens = 0;
};

class VattentionRandomTest : public testing::TestWithParam<Case> {
 protected:
  VattentionRandomTest() : allocator_(make_settings()), rng_(GetParam().seed) {}

  static VattentionSettings make_settings() {
    VattentionSettings s;
    s.groups = GetParam().groups;
    s.pool_bytes = GetParam().pool_pages * kPage + kPage / 2;  // a partial page is not a page
    s.page_bytes = kPage;
    s.max_batch_size = kSlots;
    s.max_seq_len = kMaxSeqLen;
    s.deferred_reclamation = GetParam().deferred;
    return s;
  }

  std::int64_t uniform(std::int64_t lo, std::int64_t hi) {  // inclusive
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng_);
  }
  Expected expect_of(std::int64_t tokens) const { return expect(GetParam().groups, tokens); }
  std::int64_t needed() const {
    std::int64_t pages = 0;
    for (const auto& [seq, m] : model_) pages += expect_of(m.tokens).pages;
    return pages;
  }
  SeqId random_live() { return live_[static_cast<std::size_t>(uniform(0, std::ssize(live_) - 1))]; }

  AdmitRequest random_request(SeqId seq) {
    AdmitRequest r;
    r.seq = seq;
    const std::int64_t kind = uniform(0, 99);
    if (kind < 3) {
      r.prompt_tokens = uniform(kMaxSeqLen + 1, 2 * kMaxSeqLen);  // longer than a row
    } else if (kind < 60) {
      r.prompt_tokens = uniform(1, 24);
    } else {
      r.prompt_tokens = uniform(1, 160);
    }
    r.output_tokens = uniform(0, 120);
    if (uniform(0, 9) == 0) r.generated_tokens = uniform(0, r.output_tokens);  // re-admission
    if (uniform(0, 9) == 0) r.max_new_tokens = uniform(1, 32);                  // a prefill chunk
    return r;
  }

  // The slot a request of `tokens` must take: the free slot retaining the fewest pages that
  // cover every group, else the free slot retaining the most; ties to the lowest.
  std::int64_t expected_slot(std::int64_t tokens) const {
    const auto& groups = allocator_.layout().groups();
    std::int64_t cover = -1, cover_pages = 0, most = -1, most_pages = -1;
    std::vector<bool> taken(kSlots, false);
    for (const SeqId seq : live_) taken[static_cast<std::size_t>(allocator_.slot_of(seq))] = true;
    for (std::int64_t s = 0; s < kSlots; ++s) {
      if (taken[static_cast<std::size_t>(s)]) continue;
      bool covers = true;
      std::int64_t pages = 0;
      for (std::size_t g = 0; g < groups.size(); ++g) {
        const std::int64_t have = allocator_.slot_pages_per_buffer(s, g);
        covers = covers && have >= allocator_.layout().pages_per_buffer(g, tokens);
        pages += groups[g].buffers * have;
      }
      if (covers && (cover < 0 || pages < cover_pages)) cover = s, cover_pages = pages;
      if (pages > most_pages) most = s, most_pages = pages;
    }
    return cover >= 0 ? cover : most;
  }

  void do_admit() {
    const AdmitRequest r = random_request(next_id_++);
    const std::int64_t at_admission = r.tokens_at_admission();
    // The request never holds more than it does when generating its last token.
    const std::int64_t peak = std::max(at_admission, r.final_tokens() - 1);
    const bool ever = peak <= kMaxSeqLen && expect_of(peak).pages <= GetParam().pool_pages;
    ASSERT_EQ(allocator_.can_ever_admit(r), ever);
    const std::int64_t held = std::min(at_admission, r.max_new_tokens);
    const bool fits = ever && std::ssize(live_) < kSlots && needed() + expect_of(held).pages <= GetParam().pool_pages;
    ASSERT_EQ(allocator_.can_admit(r), fits);
    const std::int64_t slot = fits ? expected_slot(held) : -1;
    const AdmitResult result = allocator_.admit(r);
    ASSERT_EQ(result.admitted, fits);
    if (!fits) {
      ++failed_admits_;
      if (ever && std::ssize(live_) == kSlots) ++slot_limited_;
      return;
    }
    ASSERT_EQ(result.held_tokens, held);
    ASSERT_EQ(result.cached_tokens, 0);
    ASSERT_EQ(allocator_.slot_of(r.seq), slot);
    model_[r.seq] = {held};
    live_.push_back(r.seq);
  }

  void do_append() {
    const SeqId seq = random_live();
    ModelSeq& m = model_[seq];
    const std::int64_t n = uniform(0, 4) == 0 ? uniform(0, 40) : uniform(0, 3);
    const bool fits = m.tokens + n <= kMaxSeqLen &&
                      needed() - expect_of(m.tokens).pages + expect_of(m.tokens + n).pages <= GetParam().pool_pages;
    ASSERT_EQ(allocator_.can_append(seq, n), fits);
    const std::int64_t mapped_before = allocator_.mapped_pages();
    ASSERT_EQ(allocator_.append(seq, n), fits);
    if (fits) {
      // Without retained pages, growth maps exactly the new pages of every buffer.
      if (!GetParam().deferred) {
        ASSERT_EQ(allocator_.mapped_pages() - mapped_before, expect_of(m.tokens + n).pages - expect_of(m.tokens).pages);
      }
      m.tokens += n;
    } else {
      ++failed_appends_;
    }
    ASSERT_EQ(allocator_.sequence_tokens(seq), m.tokens);
  }

  void do_fork() {
    const SeqId parent = random_live();
    const SeqId child = next_id_++;
    const std::int64_t tokens = model_[parent].tokens;
    const bool fits = std::ssize(live_) < kSlots && needed() + expect_of(tokens).pages <= GetParam().pool_pages;
    const std::int64_t slot = fits ? expected_slot(tokens) : -1;
    ASSERT_EQ(allocator_.fork(parent, child), fits);
    if (!fits) {
      ++failed_forks_;
      ASSERT_FALSE(allocator_.contains(child));
      return;
    }
    ASSERT_EQ(allocator_.slot_of(child), slot);
    ASSERT_EQ(allocator_.sequence_tokens(child), tokens);
    model_[child] = {tokens};
    live_.push_back(child);
  }

  void do_free() {
    const std::size_t i = static_cast<std::size_t>(uniform(0, std::ssize(live_) - 1));
    const SeqId seq = live_[i];
    const std::int64_t mapped_before = allocator_.mapped_pages();
    allocator_.free(seq);
    // Deferred reclamation keeps every page; otherwise exactly the request's pages go.
    ASSERT_EQ(mapped_before - allocator_.mapped_pages(), GetParam().deferred ? 0 : expect_of(model_[seq].tokens).pages);
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

  // Every identity, from the model, after each operation.
  void check_all() {
    allocator_.validate();
    const std::int64_t capacity = GetParam().pool_pages * kPage;
    ASSERT_EQ(allocator_.capacity_slots(), capacity);
    MemoryBreakdown expected;
    std::int64_t pages = 0;
    for (const auto& [seq, m] : model_) {
      const Expected e = expect_of(m.tokens);
      expected += e.classes;
      pages += e.pages;
    }
    ASSERT_EQ(allocator_.needed_pages(), pages);
    ASSERT_GE(allocator_.mapped_pages(), pages);
    if (!GetParam().deferred) {
      ASSERT_EQ(allocator_.mapped_pages(), pages);
    }
    expected.free = capacity - pages * kPage;
    expected.cached_free = (allocator_.mapped_pages() - pages) * kPage;
    const MemoryBreakdown b = allocator_.breakdown();
    ASSERT_EQ(b, expected);
    ASSERT_EQ(b.total(), capacity);
    const VattentionCounters& c = allocator_.counters();
    ASSERT_EQ(c.pages_mapped - c.pages_unmapped, allocator_.mapped_pages());
    ASSERT_EQ(allocator_.num_sequences(), std::ssize(live_));
    if (!live_.empty()) {  // the contiguous view of one request
      const SeqId seq = random_live();
      const std::vector<BlockId> table = allocator_.block_table(seq);
      ASSERT_EQ(std::ssize(table), model_[seq].tokens);
      const std::int64_t first = allocator_.slot_of(seq) * kMaxSeqLen;
      for (std::size_t t = 0; t < table.size(); ++t) ASSERT_EQ(table[t], first + static_cast<std::int64_t>(t));
    }
  }

  VattentionAllocator allocator_;
  std::mt19937_64 rng_;
  std::unordered_map<SeqId, ModelSeq> model_;
  std::vector<SeqId> live_;
  SeqId next_id_ = 1;
  std::int64_t failed_admits_ = 0;
  std::int64_t slot_limited_ = 0;
  std::int64_t failed_appends_ = 0;
  std::int64_t failed_forks_ = 0;
  std::int64_t misuses_ = 0;
};

TEST_P(VattentionRandomTest, EveryOperationKeepsEveryIdentity) {
  const std::int64_t ops = random_ops();
  std::int64_t drained = 0;
  for (std::int64_t step = 0; step < ops; ++step) {
    // Filling phases then a draining one, so the pool both saturates and empties.
    const bool draining = (step / 1'000) % 6 == 5;
    const std::int64_t r = uniform(0, 99);
    if (live_.empty() || r < (draining ? 10 : 35)) {
      ASSERT_NO_FATAL_FAILURE(do_admit());
    } else if (r < (draining ? 40 : 72)) {
      ASSERT_NO_FATAL_FAILURE(do_append());
    } else if (r < (draining ? 45 : 80)) {
      ASSERT_NO_FATAL_FAILURE(do_fork());
    } else if (r < 98) {
      ASSERT_NO_FATAL_FAILURE(do_free());
    } else {
      ASSERT_NO_FATAL_FAILURE(do_misuse());
    }
    ASSERT_NO_FATAL_FAILURE(check_all()) << "after step " << step;
    if (live_.empty()) ++drained;
  }
  if (ops >= 10'000) {  // the failure paths ran, not only the easy ones
    EXPECT_GT(failed_admits_, 0);
    EXPECT_GT(slot_limited_, 0);
    EXPECT_GT(failed_appends_, 0);
    EXPECT_GT(failed_forks_, 0);
    EXPECT_GT(misuses_, 0);
    EXPECT_GT(drained, 0);
    if (GetParam().deferred) {
      EXPECT_GT(allocator_.counters().pages_reused, 0);
      EXPECT_GT(allocator_.counters().pages_unmapped, 0);  // reclaimed on demand
    }
  }
  RecordProperty("failed_admits", std::to_string(failed_admits_));
  RecordProperty("slot_limited", std::to_string(slot_limited_));
  RecordProperty("failed_appends", std::to_string(failed_appends_));
  RecordProperty("pages_reused", std::to_string(allocator_.counters().pages_reused));
}

INSTANTIATE_TEST_SUITE_P(
    Models, VattentionRandomTest,
    testing::Values(Case{"uniform_immediate", uniform_model(), 600, false, 1},
                    Case{"uniform_deferred", uniform_model(), 600, true, 2},
                    Case{"mixed_immediate", mixed_model(), 1500, false, 3},
                    Case{"mixed_deferred", mixed_model(), 1500, true, 4}),
    case_name);

}  // namespace
}  // namespace pagesim::alloc

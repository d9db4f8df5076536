#include "allocator/pool/eviction_policy.h"

#include <cassert>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

namespace pagesim::alloc {
namespace {

// Doubly linked list threaded through per-block arrays: head = least recently released.
class LruPolicy final : public EvictionPolicy {
 public:
  explicit LruPolicy(std::int64_t n)
      : prev_(static_cast<std::size_t>(n), kNoBlock),
        next_(static_cast<std::size_t>(n), kNoBlock),
        in_(static_cast<std::size_t>(n), false) {}

  std::string name() const override { return std::string(to_string(EvictionKind::kLru)); }
  void on_cached(BlockId) override {}
  void insert(BlockId b) override {
    prev_[b] = tail_;
    next_[b] = kNoBlock;
    if (tail_ != kNoBlock) next_[tail_] = b; else head_ = b;
    tail_ = b;
    in_[b] = true;
    ++size_;
  }
  void erase(BlockId b) override {
    if (prev_[b] != kNoBlock) next_[prev_[b]] = next_[b]; else head_ = next_[b];
    if (next_[b] != kNoBlock) prev_[next_[b]] = prev_[b]; else tail_ = prev_[b];
    in_[b] = false;
    --size_;
  }
  BlockId pop_victim() override {
    BlockId b = head_;
    erase(b);
    return b;
  }
  BlockId peek_victim() const override { return head_; }
  std::int64_t size() const override { return size_; }
  bool contains(BlockId b) const override { return in_[b]; }

 private:
  std::vector<BlockId> prev_, next_;
  std::vector<bool> in_;
  BlockId head_ = kNoBlock, tail_ = kNoBlock;
  std::int64_t size_ = 0;
};

// Ordered by the time a block was cached; reuse does not refresh it.
class FifoPolicy final : public EvictionPolicy {
 public:
  explicit FifoPolicy(std::int64_t n)
      : cached_at_(static_cast<std::size_t>(n), 0), in_(static_cast<std::size_t>(n), false) {}

  std::string name() const override { return std::string(to_string(EvictionKind::kFifo)); }
  void on_cached(BlockId b) override { cached_at_[b] = ++clock_; }
  void insert(BlockId b) override {
    order_.emplace(cached_at_[b], b);
    in_[b] = true;
  }
  void erase(BlockId b) override {
    order_.erase({cached_at_[b], b});
    in_[b] = false;
  }
  BlockId pop_victim() override {
    BlockId b = order_.begin()->second;
    order_.erase(order_.begin());
    in_[b] = false;
    return b;
  }
  BlockId peek_victim() const override { return order_.begin()->second; }
  std::int64_t size() const override { return static_cast<std::int64_t>(order_.size()); }
  bool contains(BlockId b) const override { return in_[b]; }

 private:
  std::vector<std::uint64_t> cached_at_;
  std::vector<bool> in_;
  std::uint64_t clock_ = 0;
  std::set<std::pair<std::uint64_t, BlockId>> order_;
};

// Ordered by (hits since cached, release time): the least used block goes first, and among
// equally used ones the least recently released.
class LfuPolicy final : public EvictionPolicy {
 public:
  explicit LfuPolicy(std::int64_t n)
      : hits_(static_cast<std::size_t>(n), 0),
        released_at_(static_cast<std::size_t>(n), 0),
        in_(static_cast<std::size_t>(n), false) {}

  std::string name() const override { return std::string(to_string(EvictionKind::kLfu)); }
  void on_cached(BlockId b) override {
    assert(!in_[b]);
    hits_[b] = 0;
  }
  void on_hit(BlockId b) override {
    assert(!in_[b] && "a hit block is referenced, so not evictable");
    ++hits_[b];
  }
  void insert(BlockId b) override {
    released_at_[b] = ++clock_;
    order_.emplace(hits_[b], released_at_[b], b);
    in_[b] = true;
  }
  void erase(BlockId b) override {
    order_.erase({hits_[b], released_at_[b], b});
    in_[b] = false;
  }
  BlockId pop_victim() override {
    BlockId b = std::get<2>(*order_.begin());
    order_.erase(order_.begin());
    in_[b] = false;
    return b;
  }
  BlockId peek_victim() const override { return std::get<2>(*order_.begin()); }
  std::int64_t size() const override { return static_cast<std::int64_t>(order_.size()); }
  bool contains(BlockId b) const override { return in_[b]; }

 private:
  std::vector<std::uint64_t> hits_;         // per block: lookups that hit it since cached
  std::vector<std::uint64_t> released_at_;  // per block: clock_ when last made evictable
  std::vector<bool> in_;
  std::uint64_t clock_ = 0;
  std::set<std::tuple<std::uint64_t, std::uint64_t, BlockId>> order_;
};

// LRU in two tiers: every unprotected block (no waiting request's prompt hashes to it) goes
// before any protected one; within a tier, least recently released first. Each tier is a
// set ordered by release time so that a block changing tier keeps its place: O(log n).
class LruProtectWaitingPolicy final : public EvictionPolicy {
 public:
  explicit LruProtectWaitingPolicy(std::int64_t n)
      : released_at_(static_cast<std::size_t>(n), 0),
        protected_(static_cast<std::size_t>(n), false),
        in_(static_cast<std::size_t>(n), false) {}

  std::string name() const override { return std::string(to_string(EvictionKind::kLruProtectWaiting)); }
  void on_cached(BlockId b) override {
    assert(!in_[b]);
    protected_[b] = false;
  }
  bool protects_pending() const override { return true; }
  void set_protected(BlockId b, bool on) override {
    if (protected_[b] == on) return;
    if (in_[b]) {
      tier(protected_[b]).erase({released_at_[b], b});
      tier(on).emplace(released_at_[b], b);
    }
    protected_[b] = on;
  }
  bool is_protected(BlockId b) const override { return protected_[b]; }
  void insert(BlockId b) override {
    released_at_[b] = ++clock_;
    tier(protected_[b]).emplace(released_at_[b], b);
    in_[b] = true;
  }
  void erase(BlockId b) override {
    tier(protected_[b]).erase({released_at_[b], b});
    in_[b] = false;
  }
  BlockId pop_victim() override {
    auto& from = unprotected_.empty() ? protected_tier_ : unprotected_;
    BlockId b = from.begin()->second;
    from.erase(from.begin());
    in_[b] = false;
    return b;
  }
  BlockId peek_victim() const override {
    return (unprotected_.empty() ? protected_tier_ : unprotected_).begin()->second;
  }
  std::int64_t size() const override {
    return static_cast<std::int64_t>(unprotected_.size() + protected_tier_.size());
  }
  bool contains(BlockId b) const override { return in_[b]; }

 private:
  using Tier = std::set<std::pair<std::uint64_t, BlockId>>;  // (released_at, block)
  Tier& tier(bool prot) { return prot ? protected_tier_ : unprotected_; }

  std::vector<std::uint64_t> released_at_;  // per block: clock_ when last made evictable
  std::vector<bool> protected_;             // per block: a waiting prompt will hit it
  std::vector<bool> in_;
  std::uint64_t clock_ = 0;
  Tier unprotected_, protected_tier_;
};

}  // namespace

std::unique_ptr<EvictionPolicy> make_eviction_policy(EvictionKind kind, std::int64_t num_blocks) {
  switch (kind) {
    case EvictionKind::kLru: return std::make_unique<LruPolicy>(num_blocks);
    case EvictionKind::kFifo: return std::make_unique<FifoPolicy>(num_blocks);
    case EvictionKind::kLfu: return std::make_unique<LfuPolicy>(num_blocks);
    case EvictionKind::kLruProtectWaiting: return std::make_unique<LruProtectWaitingPolicy>(num_blocks);
  }
  return std::make_unique<LruPolicy>(num_blocks);  // unreachable: every kind is handled
}

}  // namespace pagesim::alloc

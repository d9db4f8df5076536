#include "allocator/paged/eviction_policy.h"

#include <set>
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
  std::int64_t size() const override { return static_cast<std::int64_t>(order_.size()); }
  bool contains(BlockId b) const override { return in_[b]; }

 private:
  std::vector<std::uint64_t> cached_at_;
  std::vector<bool> in_;
  std::uint64_t clock_ = 0;
  std::set<std::pair<std::uint64_t, BlockId>> order_;
};

}  // namespace

std::unique_ptr<EvictionPolicy> make_eviction_policy(EvictionKind kind, std::int64_t num_blocks) {
  if (kind == EvictionKind::kFifo) return std::make_unique<FifoPolicy>(num_blocks);
  return std::make_unique<LruPolicy>(num_blocks);
}

}  // namespace pagesim::alloc

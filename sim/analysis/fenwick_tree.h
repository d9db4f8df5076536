// FenwickTree: counts over positions 1..size() that answer prefix sums and take point
// updates in O(log n), and grow by one position at a time (also O(log n)), so a stream can
// be indexed by access time without knowing its length in advance.
//
// The LRU stack-distance pass (lru_stack_distance.h) keeps a 1 at the last access time of
// every block: the number of distinct blocks used since time t is then a range sum.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

namespace pagesim::sim {

class FenwickTree {
 public:
  // Appends position size() + 1 with value `value`; returns its position.
  std::int64_t push_back(std::int64_t value);
  // Adds `delta` at `position`. REQUIRES: 1 <= position <= size().
  void add(std::int64_t position, std::int64_t delta);
  // Sum of positions 1..position (0 when position is 0). REQUIRES: 0 <= position <= size().
  std::int64_t prefix_sum(std::int64_t position) const;
  std::int64_t size() const { return static_cast<std::int64_t>(tree_.size()) - 1; }

 private:
  // tree_[i] holds the sum of positions (i - lowbit(i), i]; tree_[0] is unused.
  std::vector<std::int64_t> tree_ = {0};
};

}  // namespace pagesim::sim

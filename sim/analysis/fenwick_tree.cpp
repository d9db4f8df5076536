#include "sim/analysis/fenwick_tree.h"

#include <cassert>

namespace pagesim::sim {
namespace {
constexpr std::int64_t lowbit(std::int64_t i) { return i & -i; }
}  // namespace

std::int64_t FenwickTree::push_back(std::int64_t value) {
  const std::int64_t i = size() + 1;
  // Node i covers (i - lowbit(i), i]: the positions already present in that range plus the new one.
  tree_.push_back(prefix_sum(i - 1) - prefix_sum(i - lowbit(i)) + value);
  return i;
}

void FenwickTree::add(std::int64_t position, std::int64_t delta) {
  assert(position >= 1 && position <= size());
  for (std::int64_t i = position; i <= size(); i += lowbit(i)) tree_[static_cast<std::size_t>(i)] += delta;
}

std::int64_t FenwickTree::prefix_sum(std::int64_t position) const {
  assert(position >= 0 && position <= size());
  std::int64_t s = 0;
  for (std::int64_t i = position; i > 0; i -= lowbit(i)) s += tree_[static_cast<std::size_t>(i)];
  return s;
}

}  // namespace pagesim::sim

#include "sim/analysis/lru_stack_distance.h"

#include <algorithm>

namespace pagesim::sim {

void LruStackDistance::lookup_then_use(std::span<const PromptBlock> blocks, std::vector<std::int64_t>* hit_capacity) {
  hit_capacity->clear();
  // Ranks are taken before any block of this request is used: the lookup sees the cache as
  // the previous request left it.
  const std::int64_t now = latest_use_marks_.size();
  const std::int64_t used = latest_use_marks_.prefix_sum(now);
  std::int64_t needed = 0;  // running maximum of the ranks: the chained lookup needs them all
  for (const PromptBlock& b : blocks) {
    const auto it = last_use_.find(b.key);
    const std::int64_t rank =
        it == last_use_.end() ? kNever : used - latest_use_marks_.prefix_sum(it->second - 1);
    needed = std::max(needed, rank);
    hit_capacity->push_back(needed);
  }
  for (const PromptBlock& b : blocks) {
    const std::int64_t t = latest_use_marks_.push_back(1);
    auto [it, fresh] = last_use_.try_emplace(b.key, t);
    if (!fresh) {
      latest_use_marks_.add(it->second, -1);
      it->second = t;
    }
  }
}

}  // namespace pagesim::sim

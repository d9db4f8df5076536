#include "sim/cluster/load_index.h"

#include <algorithm>
#include <cassert>
#include <limits>

namespace pagesim::sim {

LoadIndex::LoadIndex(std::size_t n) : n_(n) {
  assert(n <= (std::size_t{1} << 30));
  while (leaves_ < n) leaves_ *= 2;
  load_.assign(2 * leaves_, std::numeric_limits<std::int64_t>::max());
  min_at_.assign(2 * leaves_, 0);
  max_.assign(2 * leaves_, std::numeric_limits<std::int64_t>::min());
  for (std::size_t i = 0; i < leaves_; ++i) {
    min_at_[leaves_ + i] = static_cast<std::int32_t>(i);
    if (i < n) {
      load_[leaves_ + i] = 0;
      max_[leaves_ + i] = 0;
    }
  }
  for (std::size_t k = leaves_ - 1; k >= 1; --k) {
    const std::int32_t l = min_at_[2 * k], r = min_at_[2 * k + 1];
    min_at_[k] = load_[leaves_ + static_cast<std::size_t>(r)] < load_[leaves_ + static_cast<std::size_t>(l)] ? r : l;
    max_[k] = std::max(max_[2 * k], max_[2 * k + 1]);
  }
}

void LoadIndex::set(std::size_t i, std::int64_t load) {
  assert(i < n_);
  std::size_t k = leaves_ + i;
  if (load_[k] == load) return;
  load_[k] = load;
  max_[k] = load;
  for (k /= 2; k >= 1; k /= 2) {
    const std::int32_t l = min_at_[2 * k], r = min_at_[2 * k + 1];
    // The right child wins only with a strictly smaller load: ties go to the lower index.
    min_at_[k] = load_[leaves_ + static_cast<std::size_t>(r)] < load_[leaves_ + static_cast<std::size_t>(l)] ? r : l;
    max_[k] = std::max(max_[2 * k], max_[2 * k + 1]);
  }
}

}  // namespace pagesim::sim

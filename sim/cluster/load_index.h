// LoadIndex: the least- and most-loaded of n replicas, kept as their loads change instead of
// found by a scan of every replica at every arrival (issue #40: at 1,000 replicas the scan
// was 39% of a run's CPU time).
//
// A tournament tree over n entries of (load, index): each inner node holds the entry with
// the smaller load of its two children (the left one on a tie, so the root is the lowest
// index among the smallest loads, as a scan in index order finds) and the larger of their
// largest loads. set() is O(log n); argmin(), min() and max() are O(1).
//
// The Simulation owns one per routed set of replicas and sets an entry whenever that
// replica's Replica::outstanding() may have changed; routers read it (router.h). Plain
// value type; not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pagesim::sim {

class LoadIndex {
 public:
  // n entries, every load 0. REQUIRES: n <= 2^30.
  explicit LoadIndex(std::size_t n = 0);

  std::size_t size() const { return n_; }
  // REQUIRES: i < size().
  void set(std::size_t i, std::int64_t load);
  std::int64_t load(std::size_t i) const { return load_[leaves_ + i]; }

  // REQUIRES: size() > 0.
  std::int32_t argmin() const { return min_at_[1]; }
  std::int64_t min() const { return load_[leaves_ + static_cast<std::size_t>(min_at_[1])]; }
  std::int64_t max() const { return max_[1]; }

 private:
  std::size_t n_ = 0;
  std::size_t leaves_ = 1;            // a power of two >= n; node k's children are 2k, 2k + 1
  std::vector<std::int64_t> load_;    // [leaves_ + i]: entry i's load (padding: INT64_MAX)
  std::vector<std::int32_t> min_at_;  // [k]: the entry with the least load under node k
  std::vector<std::int64_t> max_;     // [k]: the largest load under node k (padding: INT64_MIN)
};

}  // namespace pagesim::sim

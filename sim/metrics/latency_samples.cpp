#include "sim/metrics/latency_samples.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <functional>
#include <span>
#include <utility>

#include "sim/metrics/sort_doubles.h"

namespace pagesim::sim {
namespace {

// Consumes the values in ascending order and keeps what the Distribution needs: the running
// sum and the values at the ranks the percentiles interpolate between.
class AscendingSummary {
 public:
  explicit AscendingSummary(std::size_t n) : n_(n) {
    for (std::size_t i = 0; i < kQuantiles.size(); ++i) {
      pos_[i] = kQuantiles[i] * static_cast<double>(n - 1);
      lo_[i] = static_cast<std::size_t>(std::floor(pos_[i]));
      hi_[i] = std::min(lo_[i] + 1, n - 1);
    }
  }
  // The next values.size() values of the ascending order.
  void take(std::span<const double> values) {
    for (const double v : values) sum_ += v;
    for (std::size_t i = 0; i < kQuantiles.size(); ++i) {
      if (lo_[i] >= rank_ && lo_[i] - rank_ < values.size()) lo_value_[i] = values[lo_[i] - rank_];
      if (hi_[i] >= rank_ && hi_[i] - rank_ < values.size()) hi_value_[i] = values[hi_[i] - rank_];
    }
    if (!values.empty()) last_ = values.back();
    rank_ += values.size();
  }
  Distribution finish() const {
    assert(rank_ == n_);
    Distribution d;
    d.mean = sum_ / static_cast<double>(n_);
    double* const out[] = {&d.p50, &d.p90, &d.p99};
    for (std::size_t i = 0; i < kQuantiles.size(); ++i)
      *out[i] = lo_value_[i] + (hi_value_[i] - lo_value_[i]) * (pos_[i] - static_cast<double>(lo_[i]));
    d.max = last_;
    return d;
  }

 private:
  static constexpr std::array<double, 3> kQuantiles = {0.50, 0.90, 0.99};
  std::size_t n_;
  std::size_t rank_ = 0;
  double sum_ = 0, last_ = 0;
  std::array<double, 3> pos_{}, lo_value_{}, hi_value_{};
  std::array<std::size_t, 3> lo_{}, hi_{};
};

}  // namespace

LatencySamples::LatencySamples(std::size_t batch_values) : batch_values_(batch_values) { assert(batch_values >= 1); }

void LatencySamples::spill() {
  sort_doubles(batch_);
  if (!file_) file_.emplace("latency samples");
  file_->append(batch_.data(), batch_.size() * sizeof(double));
  ++runs_;
  batch_.clear();
}

// A k-way merge of the spilled runs (read a block at a time) and the sorted batch, by a
// binary heap of the sources' next values; the merged values go to `take` a block at a time.
void LatencySamples::merge_runs(const std::function<void(std::span<const double>)>& take) {
  constexpr std::size_t kBlock = 4096;
  struct Source {
    std::vector<double> block;
    std::size_t next = 0;      // in block
    std::uint64_t offset = 0;  // in the file, of the next block to read
    std::size_t left = 0;      // values not yet read into block
  };
  std::vector<Source> sources(runs_ + 1);
  auto refill = [&](Source& s) {
    const std::size_t count = std::min(kBlock, s.left);
    s.block.resize(count);
    file_->read(s.offset, s.block.data(), count * sizeof(double));
    s.offset += count * sizeof(double);
    s.left -= count;
    s.next = 0;
  };
  for (std::size_t r = 0; r < runs_; ++r) {
    sources[r].offset = r * batch_values_ * sizeof(double);
    sources[r].left = batch_values_;
    refill(sources[r]);
  }
  sources[runs_].block = std::move(batch_);
  struct Head {
    double value;
    std::size_t source;
  };
  std::vector<Head> heap;  // a min-heap on value
  for (std::size_t i = 0; i < sources.size(); ++i)
    if (!sources[i].block.empty()) heap.push_back({sources[i].block.front(), i});
  const auto later = [](const Head& a, const Head& b) { return a.value > b.value; };
  std::make_heap(heap.begin(), heap.end(), later);
  // Replaces the top by h (or drops it when h is null) and restores the heap below it.
  const auto replace_top = [&](const Head* h) {
    const Head moved = h ? *h : heap.back();
    if (!h) heap.pop_back();
    if (heap.empty()) return;
    std::size_t at = 0;
    for (;;) {
      std::size_t child = 2 * at + 1;
      if (child >= heap.size()) break;
      if (child + 1 < heap.size() && heap[child + 1].value < heap[child].value) ++child;
      if (!(heap[child].value < moved.value)) break;
      heap[at] = heap[child];
      at = child;
    }
    heap[at] = moved;
  };
  std::vector<double> out;
  out.reserve(kBlock);
  while (!heap.empty()) {
    const std::size_t i = heap.front().source;
    out.push_back(heap.front().value);
    if (out.size() == kBlock) {
      take(out);
      out.clear();
    }
    Source& s = sources[i];
    if (++s.next == s.block.size()) {
      if (s.left == 0) {
        replace_top(nullptr);
        continue;
      }
      refill(s);
    }
    const Head next{s.block[s.next], i};
    replace_top(&next);
  }
  take(out);
}

Distribution LatencySamples::distribution() {
  const auto n = static_cast<std::size_t>(size());
  if (n == 0) return {};
  sort_doubles(batch_);
  AscendingSummary summary(n);
  if (runs_ == 0) {
    summary.take(batch_);
  } else {
    merge_runs([&summary](std::span<const double> values) { summary.take(values); });
  }
  batch_.clear();
  file_.reset();
  runs_ = 0;
  return summary.finish();
}

}  // namespace pagesim::sim

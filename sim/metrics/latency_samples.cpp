#include "sim/metrics/latency_samples.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <functional>
#include <limits>
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

LatencySamples::LatencySamples(std::size_t batch_values, LatencySpill* shared)
    : batch_values_(batch_values), shared_(shared) {
  assert(batch_values >= 1);
}

void LatencySamples::spill() {
  sort_doubles(batch_);
  runs_.push_back(spill_file().file().append(batch_.data(), batch_.size() * sizeof(double)));
  batch_.clear();
}

// The spilled runs (read a window at a time) and the sorted batch, merged into one ascending
// stream a slice at a time. A source's window is its next `window` values; t is the least
// last value of the windows of the sources that hold more than their window (+inf if none).
// Every value below t lies in a window or in a source held whole (a source's values past
// its window are >= its window's last value >= t), so those values <= t, sorted, are the
// next values of the merged order, and every value left is >= t. (Values equal to t may be
// left for the next slice: equal values have equal bits, so which copy goes first changes
// nothing.) The source whose window ends at t gives its whole window, so each slice takes at
// least `window` values or all that are left. Sorting a slice (a radix sort, sort_doubles)
// costs a fraction of what a heap merge's unpredictable comparisons did: 10 M requests in
// 2^18-value batches (about 40 runs a latency), 6% of the run's time with the heap, 1.5% so.
void LatencySamples::merge_runs(const std::function<void(std::span<const double>)>& take) {
  const std::size_t window = std::max<std::size_t>(4096, batch_values_ / (runs_.size() + 1));
  const SpillFile& file = spill_file().file();
  struct Source {
    std::vector<double> values;  // values[next..) are read and not yet taken
    std::size_t next = 0;
    std::uint64_t offset = 0;    // in the file, of the first value not yet read
    std::size_t unread = 0;      // values in the file not yet read
    std::size_t held() const { return values.size() - next; }
    // Whether values past the window exist (read or not): they bound the slice.
    bool bounds(std::size_t w) const { return unread > 0 || held() > w; }
  };
  std::vector<Source> sources(runs_.size() + 1);
  for (std::size_t r = 0; r < runs_.size(); ++r) {
    sources[r].offset = runs_[r];
    sources[r].unread = batch_values_;
  }
  sources.back().values = std::move(batch_);
  // Tops up s's read values to a window from the file (the batch is all in memory already).
  const auto fill = [&](Source& s) {
    if (s.held() >= window || s.unread == 0) return;
    s.values.erase(s.values.begin(), s.values.begin() + static_cast<std::ptrdiff_t>(s.next));
    s.next = 0;
    const std::size_t held = s.values.size();
    const std::size_t count = std::min(window - held, s.unread);
    s.values.resize(held + count);
    file.read(s.offset, s.values.data() + held, count * sizeof(double));
    s.offset += count * sizeof(double);
    s.unread -= count;
  };
  std::vector<double> slice;
  while (!sources.empty()) {
    double t = std::numeric_limits<double>::infinity();
    for (Source& s : sources) {
      fill(s);
      if (s.bounds(window)) t = std::min(t, s.values[s.next + window - 1]);
    }
    slice.clear();
    for (Source& s : sources) {
      const auto begin = s.values.begin() + static_cast<std::ptrdiff_t>(s.next);
      const auto end = s.bounds(window) ? begin + static_cast<std::ptrdiff_t>(window) : s.values.end();
      const auto upto = std::upper_bound(begin, end, t);
      slice.insert(slice.end(), begin, upto);
      s.next += static_cast<std::size_t>(upto - begin);
    }
    std::erase_if(sources, [](const Source& s) { return s.held() == 0 && s.unread == 0; });
    sort_doubles(slice);
    take(slice);
  }
}

Distribution LatencySamples::distribution() {
  const auto n = static_cast<std::size_t>(size());
  if (n == 0) return {};
  sort_doubles(batch_);
  AscendingSummary summary(n);
  if (runs_.empty()) {
    summary.take(batch_);
  } else {
    merge_runs([&summary](std::span<const double> values) { summary.take(values); });
  }
  batch_.clear();
  runs_.clear();
  if (!shared_) own_ = LatencySpill();  // its space goes back; a shared file's, when the run's spill goes
  return summary.finish();
}

}  // namespace pagesim::sim

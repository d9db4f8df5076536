// sort_doubles against std::sort on latency-like values (lognormal), by count: where the
// radix passes start to pay (sort_doubles.cpp's kRadixMinSize) and what they save on the
// sizes a run sorts (a fleet replica's few hundred to thousands of values a latency, a
// cluster's millions). Below the threshold both are std::sort.
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include "sim/metrics/sort_doubles.h"

namespace {

// Enough copies of n values that a timed batch sorts about 2^20 of them, each copy unsorted.
std::vector<std::vector<double>> latencies(std::int64_t n) {
  std::mt19937_64 gen(7);
  std::lognormal_distribution<double> seconds(0.0, 1.0);
  std::vector<std::vector<double>> copies(static_cast<std::size_t>(std::max<std::int64_t>(1, (1 << 20) / n)));
  for (auto& c : copies) {
    c.resize(static_cast<std::size_t>(n));
    for (double& v : c) v = seconds(gen);
  }
  return copies;
}

template <class Sort>
void run(benchmark::State& state, Sort sort) {
  const std::vector<std::vector<double>> input = latencies(state.range(0));
  std::int64_t values = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<std::vector<double>> work = input;
    state.ResumeTiming();
    for (auto& c : work) sort(c);
    benchmark::DoNotOptimize(work.front().data());
    values += static_cast<std::int64_t>(work.size() * work.front().size());
  }
  state.SetItemsProcessed(values);
}

void BM_SortDoubles(benchmark::State& state) {
  run(state, [](std::vector<double>& v) { pagesim::sim::sort_doubles(v); });
}
void BM_StdSort(benchmark::State& state) {
  run(state, [](std::vector<double>& v) { std::sort(v.begin(), v.end()); });
}

}  // namespace

BENCHMARK(BM_SortDoubles)->Arg(64)->Arg(128)->Arg(256)->Arg(720)->Arg(2048)->Arg(4096)->Arg(7200)->Arg(1 << 20);
BENCHMARK(BM_StdSort)->Arg(64)->Arg(128)->Arg(256)->Arg(720)->Arg(2048)->Arg(4096)->Arg(7200)->Arg(1 << 20);
BENCHMARK_MAIN();

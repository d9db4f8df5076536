// Speed of the contiguous KV allocators: admit + free in a full pool, per-token append, and
// the per-iteration reads (breakdown, unusable_free), for each placement policy at pools of
// 10^4 and 10^6 blocks of 16 slots (first_fit / best_fit get the same slot capacity).
//
// Requests are ShareGPT-like (prompt and output 1..1024, total < 2048), reservation pow2,
// max_seq_len 2048, max chunk 128 blocks: the vLLM paper's Orca setup, scaled in pool size.
// The pool is first filled until an admission fails, so every measurement sees a full,
// fragmented pool. Requests are drawn up front so the timed loops hold no RNG work.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "allocator/contiguous/contiguous_allocator.h"

namespace pagesim::alloc {
namespace {

constexpr std::int64_t kBlockSize = 16;
constexpr std::size_t kRequestPool = 1 << 16;  // pre-drawn requests, reused cyclically

const PlacementKind kPlacements[] = {PlacementKind::kBuddy, PlacementKind::kFirstFit,
                                     PlacementKind::kBestFit};

struct Fixture {
  explicit Fixture(const benchmark::State& state)
      : allocator(settings(kPlacements[state.range(0)], state.range(1))), rng(42) {
    std::uniform_int_distribution<std::int64_t> length(1, 1024);
    requests.reserve(kRequestPool);
    while (requests.size() < kRequestPool) {
      AdmitRequest r;
      r.prompt_tokens = length(rng);
      r.output_tokens = length(rng);
      if (r.prompt_tokens + r.output_tokens < 2048) requests.push_back(r);
    }
    // Fill until the first admission fails.
    while (admit_next()) {
    }
  }

  static ContiguousSettings settings(PlacementKind placement, std::int64_t blocks) {
    ContiguousSettings s;
    s.capacity_slots = blocks * kBlockSize;
    s.block_size = kBlockSize;
    s.max_seq_len = 2048;
    s.reservation = ReservationPolicy::pow2();
    s.placement = placement;
    s.max_chunk_blocks = 128;
    return s;
  }

  bool admit_next() {
    AdmitRequest r = requests[next_request++ % kRequestPool];
    r.seq = next_seq++;
    if (!allocator.admit(r).admitted) return false;
    live.push_back(r.seq);
    return true;
  }

  // Frees a live sequence chosen by `pick`, a uniform index source.
  void free_random(std::uint64_t pick) {
    const std::size_t i = pick % live.size();
    allocator.free(live[i]);
    live[i] = live.back();
    live.pop_back();
  }

  ContiguousAllocator allocator;
  std::mt19937_64 rng;
  std::vector<AdmitRequest> requests;
  std::vector<SeqId> live;
  std::size_t next_request = 0;
  SeqId next_seq = 1;
};

void set_label(benchmark::State& state, const Fixture& f) {
  state.SetLabel(f.allocator.name() + " live=" + std::to_string(f.live.size()));
}

// One iteration: free a random live sequence, then admit the next request (which may fail;
// the pool then drifts a little below full until admissions succeed again).
void BM_AdmitFree(benchmark::State& state) {
  Fixture f(state);
  std::vector<std::uint64_t> picks(kRequestPool);
  for (auto& p : picks) p = f.rng();
  std::size_t i = 0;
  std::int64_t admitted = 0;
  for (auto _ : state) {
    if (f.live.empty()) {
      state.SkipWithError("pool holds no sequence");
      break;
    }
    f.free_random(picks[i++ % kRequestPool]);
    admitted += f.admit_next() ? 1 : 0;
  }
  state.counters["admit_ok"] =
      benchmark::Counter(static_cast<double>(admitted), benchmark::Counter::kAvgIterations);
  state.SetItemsProcessed(state.iterations());
  set_label(state, f);
}

// One iteration: grow a random live sequence by one token (fails once its range is full).
void BM_AppendOne(benchmark::State& state) {
  Fixture f(state);
  std::vector<SeqId> order(kRequestPool);
  for (auto& s : order) s = f.live[f.rng() % f.live.size()];
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(f.allocator.append(order[i++ % kRequestPool], 1));
  }
  state.SetItemsProcessed(state.iterations());
  set_label(state, f);
}

void BM_Breakdown(benchmark::State& state) {
  Fixture f(state);
  for (auto _ : state) {
    MemoryBreakdown b = f.allocator.breakdown();
    benchmark::DoNotOptimize(b);
  }
  set_label(state, f);
}

void BM_UnusableFree(benchmark::State& state) {
  Fixture f(state);
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(f.allocator.unusable_free(f.requests[i++ % kRequestPool]));
  }
  set_label(state, f);
}

void pools(benchmark::internal::Benchmark* b) {
  b->ArgNames({"placement", "blocks"});
  for (std::int64_t placement = 0; placement < 3; ++placement) {
    for (std::int64_t blocks : {10'000, 1'000'000}) b->Args({placement, blocks});
  }
}

BENCHMARK(BM_AdmitFree)->Apply(pools);
BENCHMARK(BM_AppendOne)->Apply(pools);
BENCHMARK(BM_Breakdown)->Apply(pools);
BENCHMARK(BM_UnusableFree)->Apply(pools);

}  // namespace
}  // namespace pagesim::alloc

BENCHMARK_MAIN();

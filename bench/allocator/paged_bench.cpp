// Paged allocator speed: per-block cost of append / free / fork / prefix lookups, and
// breakdown() reads, at pools of 10^4 and 10^6 blocks. items_per_second counts blocks
// (tokens for the per-token append, by id and by handle), so ns per block = 1e9 /
// items_per_second.
#include <benchmark/benchmark.h>

#include <vector>

#include "allocator/pool/block_hash.h"
#include "allocator/paged/paged_allocator.h"

namespace pagesim::alloc {
namespace {

constexpr std::int32_t kBlock = 16;

PagedAllocator make(std::int64_t blocks, bool prefix = false) {
  PagedAllocatorSettings s;
  s.num_blocks = blocks;
  s.block_size = kBlock;
  s.prefix_cache = prefix;
  return PagedAllocator(s);
}

AdmitRequest req(SeqId id, std::int64_t prompt) {
  AdmitRequest r;
  r.seq = id;
  r.prompt_tokens = prompt;
  r.output_tokens = 64 * kBlock;
  return r;
}

// Fill the whole pool with sequences of 64 blocks grown one block per append, then free
// them all: the amortized cost of taking and returning one block.
void BM_AppendBlockAndFree(benchmark::State& st) {
  const std::int64_t blocks = st.range(0);
  PagedAllocator a = make(blocks);
  const std::int64_t seqs = blocks / 64;
  for (auto _ : st) {
    for (SeqId s = 0; s < static_cast<SeqId>(seqs); ++s) {
      a.admit(req(s, kBlock));
      for (int b = 1; b < 64; ++b) a.append(s, kBlock);
    }
    for (SeqId s = 0; s < static_cast<SeqId>(seqs); ++s) a.free(s);
  }
  st.SetItemsProcessed(st.iterations() * seqs * 64);
}
BENCHMARK(BM_AppendBlockAndFree)->Arg(10'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

// Decode-like growth: one token per append call (a new block every 16th call).
void BM_AppendToken(benchmark::State& st) {
  const std::int64_t blocks = st.range(0);
  PagedAllocator a = make(blocks);
  const std::int64_t seqs = blocks / 64;
  for (auto _ : st) {
    for (SeqId s = 0; s < static_cast<SeqId>(seqs); ++s) a.admit(req(s, 1));
    for (int t = 1; t < 64 * kBlock; ++t)
      for (SeqId s = 0; s < static_cast<SeqId>(seqs); ++s) a.append(s, 1);
    for (SeqId s = 0; s < static_cast<SeqId>(seqs); ++s) a.free(s);
  }
  st.SetItemsProcessed(st.iterations() * seqs * 64 * kBlock);
}
BENCHMARK(BM_AppendToken)->Arg(10'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

// The same growth by handle (the schedulers' per-token path: no lookup by id).
void BM_GrowTokenByHandle(benchmark::State& st) {
  const std::int64_t blocks = st.range(0);
  PagedAllocator a = make(blocks);
  const std::int64_t seqs = blocks / 64;
  std::vector<SeqHandle> handles(static_cast<std::size_t>(seqs));
  for (auto _ : st) {
    for (SeqId s = 0; s < static_cast<SeqId>(seqs); ++s) {
      a.admit(req(s, 1));
      handles[s] = a.handle(s);
    }
    for (int t = 1; t < 64 * kBlock; ++t)
      for (const SeqHandle& h : handles) a.grow(h, 1);
    for (SeqId s = 0; s < static_cast<SeqId>(seqs); ++s) a.free(s);
  }
  st.SetItemsProcessed(st.iterations() * seqs * 64 * kBlock);
}
BENCHMARK(BM_GrowTokenByHandle)->Arg(10'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

// Fork a 64-block sequence and free the child: per shared block.
void BM_ForkFree(benchmark::State& st) {
  PagedAllocator a = make(st.range(0));
  a.admit(req(0, 64 * kBlock));
  for (auto _ : st) {
    a.fork(0, 1);
    a.free(1);
  }
  st.SetItemsProcessed(st.iterations() * 64);
}
BENCHMARK(BM_ForkFree)->Arg(10'000)->Arg(1'000'000);

// Admit a 64-block prompt whose blocks are all cached (held by another sequence): one
// hash lookup and a ref-count increment per block; then free.
void BM_PrefixHitAdmitFree(benchmark::State& st) {
  PagedAllocator a = make(st.range(0), true);
  std::vector<BlockHash> hashes;
  BlockHash h = kRootBlockHash;
  for (int i = 0; i < 64; ++i) hashes.push_back(h = chain_block_hash(h, static_cast<std::uint64_t>(i), 0));
  AdmitRequest base = req(0, 64 * kBlock);
  base.prompt_block_hashes = hashes;
  a.admit(base);
  // Fill the cache's index so lookups miss the CPU cache as in a large run.
  for (SeqId s = 1; s < static_cast<SeqId>(st.range(0) / 64 - 1); ++s) {
    std::vector<BlockHash> other;
    BlockHash g = kRootBlockHash;
    for (int i = 0; i < 64; ++i) other.push_back(g = chain_block_hash(g, s * 1000 + i, 0));
    AdmitRequest r = req(s, 64 * kBlock);
    r.prompt_block_hashes = other;
    a.admit(r);
  }
  const SeqId probe = 1u << 30;
  for (auto _ : st) {
    AdmitRequest r = base;
    r.seq = probe;
    benchmark::DoNotOptimize(a.admit(r));
    a.free(probe);
  }
  st.SetItemsProcessed(st.iterations() * 64);
}
BENCHMARK(BM_PrefixHitAdmitFree)->Arg(10'000)->Arg(1'000'000);

void BM_Breakdown(benchmark::State& st) {
  PagedAllocator a = make(st.range(0));
  for (SeqId s = 0; s < 100; ++s) a.admit(req(s, 37));
  for (auto _ : st) benchmark::DoNotOptimize(a.breakdown());
}
BENCHMARK(BM_Breakdown)->Arg(10'000)->Arg(1'000'000);

}  // namespace
}  // namespace pagesim::alloc

BENCHMARK_MAIN();

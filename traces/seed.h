// Seed derivation: independent, reproducible random streams from one 64-bit experiment seed.
//
// Each random part of a workload (arrival times, prompt lengths, output lengths, row draws,
// the shuffle, sampling parameters) draws from its own std::mt19937_64 seeded with
// derive_seed(seed, stream). Changing one part's settings therefore never changes the draws
// of another, and the same seed gives the same workload on every platform: mt19937_64 is
// fully specified by the standard and the distributions come from Boost.Random (whose
// algorithms, unlike those of <random>, do not vary between standard libraries).
#pragma once

#include <cstdint>

namespace pagesim::traces {

enum class SeedStream : std::uint64_t {
  kArrivals = 1,
  kPromptLengths = 2,
  kOutputLengths = 3,
  kRowDraws = 4,
  kShuffle = 5,
  kSampling = 6,
  kSessionTurns = 7,       // sessions: turns per session
  kThinkTimes = 8,         // sessions: pauses between turns
  kSystemPrompts = 9,      // sessions: system prompt lengths
  kSystemPromptChoice = 10,  // sessions: which system prompt a session uses
  kAdapters = 11,          // LoRA: which adapter each request names (adapter_assignment.h)
};

// Which generators a synthetic workload draws from:
//   kPagesim   one std::mt19937_64 stream per part, seeded by derive_seed() (the default);
//   kArtifact  the vLLM paper artifact's own generators (artifact_random.h), seeded with the
//              experiment seed itself as its trace.py does: NumPy's legacy MT19937 for the
//              poisson_quantum counts, CPython's for the cycle_shuffle shuffle. Together
//              with the artifact's lengths file this replays the paper's exact workload.
enum class WorkloadRng { kPagesim, kArtifact };

// SplitMix64's finaliser: a bijective 64-bit mix.
constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The seed of `stream` under experiment seed `seed`.
constexpr std::uint64_t derive_seed(std::uint64_t seed, SeedStream stream) {
  return splitmix64(splitmix64(seed) ^ static_cast<std::uint64_t>(stream));
}

}  // namespace pagesim::traces

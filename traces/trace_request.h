// TraceRequest: one request of a workload, as read from a trace file or generated.
//
// A plain value. Lengths are in tokens; arrival_s is seconds on the workload's own clock
// (trace files: as written, except the Azure reader, which counts from the first row;
// generators: from 0). A request asks for `n` parallel samples, or for beam search with
// `beam_width` beams when beam_width > 1. hash_ids, when present, names the prompt's hash
// blocks in order (one id per block of RequestSource::hash_block_tokens() tokens, the last
// block possibly partial): equal ids mean an identical prefix up to and including that block.
#pragma once

#include <cstdint>
#include <vector>

namespace pagesim::traces {

// Largest prompt or output length accepted anywhere (readers, generators, writer): far above
// any real request, and low enough that sums over 10^9 requests fit in 64 bits.
inline constexpr std::int64_t kMaxTokens = std::int64_t{1} << 32;

inline constexpr std::int32_t kNoAdapter = -1;

struct TraceRequest {
  std::uint64_t id = 0;             // unique within one source, increasing
  double arrival_s = 0.0;           // arrival time, seconds, >= 0
  std::int64_t prompt_tokens = 0;   // prompt length, in [1, kMaxTokens]
  std::int64_t output_tokens = 0;   // true output length (tokens to generate), [0, kMaxTokens]
  std::int32_t n = 1;               // parallel samples, >= 1
  std::int32_t beam_width = 1;      // beams, >= 1; 1 = no beam search
  std::vector<std::uint64_t> hash_ids = {};  // one id per hash block of the prompt; may be empty
  std::int32_t adapter = kNoAdapter;  // LoRA adapter the request names, >= 0; kNoAdapter: the base model

  std::int64_t total_tokens() const { return prompt_tokens + output_tokens; }
  friend bool operator==(const TraceRequest&, const TraceRequest&) = default;
};

// Number of hash blocks of `block_tokens` tokens that cover `prompt_tokens` tokens (the last
// one possibly partial). REQUIRES: prompt_tokens >= 0, block_tokens >= 1.
constexpr std::int64_t hash_blocks_for(std::int64_t prompt_tokens, std::int64_t block_tokens) {
  return prompt_tokens / block_tokens + (prompt_tokens % block_tokens != 0 ? 1 : 0);
}

}  // namespace pagesim::traces

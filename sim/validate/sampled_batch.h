// SampledBatch: one simulated iteration's batch as the paged-attention kernels see it, with
// enough about every token to rebuild its KV content — the input of `pagesim validate`.
//
// For each sequence of the batch: its block table (physical block ids; block_size tokens
// each), kv_len (tokens in the cache, this iteration's new ones included), query_len (the
// trailing tokens that attend: 1 for a decode, the chunk for a prefill) and the identity of
// every logical token 0 .. kv_len-1. Identities are given as runs (TokenRun): token t of a
// run starting at `start` has identity (origin, offset + t - start). KV content is a
// deterministic function of identity, so tokens with equal identities hold equal K/V:
// correctly shared blocks agree, a copy-on-write copy equals its source, and a cached
// prefix block is the same for every request that hits it. A wrong block table, a missing
// copy or a bad prefix hit puts some token's KV where another token's should be, and the
// attention output then differs from dense attention over the logical token list.
//
// Origins: "p<request>" the prompt of a request; "h<hash>" a prefix-cached full block,
// keyed by its chained hash (offset = slot in block); "b<branch>" the tokens a sequence
// generated on one branch of its fork lineage. Plain value types.
//
// File format (JSON Lines, written atomically as OUT/batches.jsonl):
//   line 1: {"format": "pagesim-batches", "version": 1, "block_size": B, "num_blocks": N,
//            "allocator": "...", "experiment": "..."[, "mask": "sliding_window", "window": W]
//            [, "attention": "latent", "latent_dim": D, "value_dim": V]}
//   then one line per batch:
//     {"iteration": i, "time_s": t, "sequences": [
//        {"request": r, "seq": s, "kv_len": n, "query_len": q, "block_table": [b0, b1, ...],
//         "tokens": [{"start": 0, "length": 16, "origin": "h123", "offset": 0}, ...]}, ...]}
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "kernels/attention_mask.h"

namespace pagesim::sim {

struct TokenRun {
  std::int64_t start = 0;   // first logical position of the run
  std::int64_t length = 0;  // tokens in the run
  std::string origin;       // "p<request>", "h<hash>" or "b<branch>"
  std::int64_t offset = 0;  // identity offset of the run's first token

  friend bool operator==(const TokenRun&, const TokenRun&) = default;
};

struct SampledSequence {
  std::uint64_t request = 0;
  std::uint64_t seq = 0;
  std::int64_t kv_len = 0;
  std::int64_t query_len = 1;
  std::vector<std::int32_t> block_table;  // >= ceil(kv_len / block_size) entries
  std::vector<TokenRun> tokens;           // cover 0 .. kv_len-1 in order, without gaps

  friend bool operator==(const SampledSequence&, const SampledSequence&) = default;
};

struct SampledBatch {
  std::int64_t iteration = 0;
  double time_s = 0;
  std::vector<SampledSequence> sequences;

  friend bool operator==(const SampledBatch&, const SampledBatch&) = default;
};

// The largest block_size read_batch_file accepts. The validator holds a paged cache of whole
// blocks (block_size slots per KV head), so a header's block size sizes its memory; larger
// blocks than this are no allocator's (the CUDA kernels take at most 1024).
inline constexpr std::int32_t kMaxBatchFileBlockSize = 1 << 16;

struct BatchFileHeader {
  std::int32_t block_size = 16;
  std::int64_t num_blocks = 0;
  std::string allocator;
  std::string experiment;
  // The attention of the layer group the batches were sampled from: causal (the default, not
  // written), or a sliding window / chunk ("mask": "sliding_window" | "chunked_local",
  // "window": W in the header line). With a window, block-table entries before a sequence's
  // attended blocks (kernels::attended_blocks) may be -1: the allocator freed them.
  kernels::AttentionMask mask;
  // Absorbed multi-head latent attention (an MLA model's pool: kernels/latent_args.h): each
  // token caches one latent row of latent_dim elements whose first value_dim are the value
  // ("attention": "latent", "latent_dim": D, "value_dim": V in the header line; causal only).
  // 0: standard attention (not written).
  std::int32_t latent_dim = 0;
  std::int32_t value_dim = 0;

  bool latent() const { return latent_dim > 0; }
};

// Serialises one batch or the header as a single JSON line (no newline).
std::string to_json_line(const BatchFileHeader& h);
std::string to_json_line(const SampledBatch& b);

struct BatchFile {
  BatchFileHeader header;
  std::vector<SampledBatch> batches;
};

// Reads a batches.jsonl file. Throws std::runtime_error naming file:line and what was
// expected for a malformed line (bad JSON, missing key, runs that do not cover kv_len, a
// batch with no sequence, a sequence with query_len < 1, ...).
BatchFile read_batch_file(const std::filesystem::path& path);

}  // namespace pagesim::sim

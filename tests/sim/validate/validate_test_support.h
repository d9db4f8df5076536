// Test support for sim/validate: hand-built sampled batches (a correct one with shared
// prefix blocks and a fork, and planted allocator faults) and batch files in a temp folder.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "sim/validate/sampled_batch.h"

namespace pagesim::sim::testing {

struct Run {
  std::string origin;
  std::int64_t offset = 0;
  std::int64_t length = 0;
};

// A sequence whose logical tokens are `runs` in order (kv_len = their total length).
inline SampledSequence make_seq(std::uint64_t request, std::uint64_t seq, std::vector<std::int32_t> blocks,
                                const std::vector<Run>& runs, std::int64_t query_len = 1) {
  SampledSequence s;
  s.request = request;
  s.seq = seq;
  s.block_table = std::move(blocks);
  for (const Run& r : runs) {
    s.tokens.push_back(TokenRun{s.kv_len, r.length, r.origin, r.offset});
    s.kv_len += r.length;
  }
  s.query_len = query_len;
  return s;
}

inline constexpr std::int32_t kBlock = 4;      // block size of the hand-built batches
inline constexpr std::int64_t kNumBlocks = 64;

// A correct decode batch, block size 4:
//   r1, r2: share two prefix-cached blocks (h100, h101 in blocks 3, 7), then their own
//           prompt tails (r1: block 9; r2: blocks 12, 13);
//   r3: forked into seq 0 and seq 1 after a 6-token prompt (block 20 full, block 21 half):
//       seq 1 kept block 21, seq 0 got its copy-on-write copy 22; each generated 3 tokens
//       on its own branch (b30, b31), the third in a block of its own (23, 24).
inline SampledBatch correct_batch() {
  SampledBatch b;
  b.iteration = 42;
  b.time_s = 1.5;
  b.sequences.push_back(make_seq(1, 0, {3, 7, 9}, {{"h100", 0, 4}, {"h101", 0, 4}, {"p1", 8, 2}}));
  b.sequences.push_back(make_seq(2, 0, {3, 7, 12, 13}, {{"h100", 0, 4}, {"h101", 0, 4}, {"p2", 8, 5}}));
  b.sequences.push_back(make_seq(3, 0, {20, 22, 23}, {{"p3", 0, 6}, {"b30", 0, 3}}));
  b.sequences.push_back(make_seq(3, 1, {20, 21, 24}, {{"p3", 0, 6}, {"b31", 0, 3}}));
  return b;
}

inline BatchFileHeader header(std::int32_t block_size = kBlock, std::int64_t num_blocks = kNumBlocks) {
  BatchFileHeader h;
  h.block_size = block_size;
  h.num_blocks = num_blocks;
  h.allocator = "paged";
  h.experiment = "hand-built";
  return h;
}

// A fresh folder under the system temp dir, removed on destruction.
class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() /
              ("pagesim_" + name + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Writes a batch file (header line, then one line per batch) and returns its path.
inline std::filesystem::path write_batch_file(const std::filesystem::path& dir, const std::string& name,
                                              const BatchFileHeader& h, const std::vector<SampledBatch>& batches) {
  const std::filesystem::path p = dir / name;
  std::ofstream out(p);
  out << to_json_line(h) << "\n";
  for (const SampledBatch& b : batches) out << to_json_line(b) << "\n";
  return p;
}

inline std::filesystem::path write_text(const std::filesystem::path& dir, const std::string& name,
                                        const std::string& text) {
  const std::filesystem::path p = dir / name;
  std::ofstream(p) << text;
  return p;
}

}  // namespace pagesim::sim::testing

// SpillFile: an anonymous temporary file for what a run would otherwise hold in memory in
// proportion to its length (sorted runs of latency samples: metrics/latency_samples.h; a
// replica's long waiting backlog: output/spill_queue.h).
//
// Created in $TMPDIR (or /tmp) and unlinked at once, so nothing is left behind however the
// process ends; the descriptor is closed by the destructor. Writes append; reads are by
// offset. Errors (no temporary folder, no space left) throw std::runtime_error naming the
// folder, what the file holds and the system's reason. Move-only; not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace pagesim::sim {

class SpillFile {
 public:
  // `holds`: what the file is for, for error messages ("latency samples").
  explicit SpillFile(std::string holds);
  ~SpillFile();
  SpillFile(SpillFile&& other) noexcept;
  SpillFile& operator=(SpillFile&& other) noexcept;
  SpillFile(const SpillFile&) = delete;
  SpillFile& operator=(const SpillFile&) = delete;

  // Appends `bytes` bytes of `data`; returns the offset they start at.
  std::uint64_t append(const void* data, std::size_t bytes);
  // Reads `bytes` bytes at `offset` into `data`. REQUIRES: offset + bytes <= size().
  void read(std::uint64_t offset, void* data, std::size_t bytes) const;
  std::uint64_t size() const { return size_; }
  // Drops the contents (the space goes back to the file system); size() is 0 again.
  void clear();

 private:
  [[noreturn]] void fail(const char* what) const;

  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::string holds_;
  std::string folder_;
};

}  // namespace pagesim::sim

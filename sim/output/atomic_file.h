// AtomicFile: an output file that appears whole or not at all.
//
// Writes go to "<path>.tmp"; commit() flushes and renames it over <path>. If the object is
// destroyed without commit() (an exception unwound the run), the temporary is removed, so
// no half-written result is ever left behind. Not copyable; not thread-safe.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace pagesim::sim {

class AtomicFile {
 public:
  // Creates parent folders as needed. Throws std::runtime_error naming the path on failure.
  explicit AtomicFile(std::filesystem::path path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ofstream& stream() { return out_; }
  // Flushes and renames into place. Throws std::runtime_error on an I/O error.
  void commit();

 private:
  std::filesystem::path path_;
  std::filesystem::path tmp_;
  std::ofstream out_;
  bool committed_ = false;
};

// Writes `text` to `path` atomically.
void write_file_atomically(const std::filesystem::path& path, const std::string& text);

}  // namespace pagesim::sim

#include "sim/output/atomic_file.h"

#include <stdexcept>
#include <system_error>

namespace pagesim::sim {

AtomicFile::AtomicFile(std::filesystem::path path) : path_(std::move(path)), tmp_(path_) {
  tmp_ += ".tmp";
  if (path_.has_parent_path()) std::filesystem::create_directories(path_.parent_path());
  out_.open(tmp_, std::ios::binary | std::ios::trunc);
  if (!out_) throw std::runtime_error("cannot write '" + tmp_.string() + "'");
}

AtomicFile::~AtomicFile() {
  if (committed_) return;
  out_.close();
  std::error_code ec;
  std::filesystem::remove(tmp_, ec);
}

void AtomicFile::commit() {
  out_.flush();
  if (!out_) throw std::runtime_error("I/O error writing '" + tmp_.string() + "'");
  out_.close();
  std::filesystem::rename(tmp_, path_);
  committed_ = true;
}

void write_file_atomically(const std::filesystem::path& path, const std::string& text) {
  AtomicFile f(path);
  f.stream() << text;
  f.commit();
}

}  // namespace pagesim::sim

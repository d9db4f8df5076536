// FileBuffer: a std::streambuf over a POSIX file descriptor that remembers why writing
// failed. std::filebuf turns every failed write into a bad stream and drops errno, so a full
// disk reads as a bare "I/O error"; FileBuffer keeps the first failed call's errno (ENOSPC,
// EDQUOT, EIO, ...) for the caller's message. After the first failure it writes nothing more.
// Owns its descriptor (closed by close() or the destructor). Not copyable; not thread-safe.
#pragma once

#include <array>
#include <filesystem>
#include <streambuf>

namespace pagesim::sim {

class FileBuffer : public std::streambuf {
 public:
  FileBuffer() = default;
  ~FileBuffer() override;
  FileBuffer(const FileBuffer&) = delete;
  FileBuffer& operator=(const FileBuffer&) = delete;

  // Creates or truncates `path` for writing. Returns 0, or the errno of the failed open.
  int open(const std::filesystem::path& path);
  // Writes what is buffered and closes the descriptor. Returns error() afterwards.
  int close();
  // 0, or the errno of the first failed open, write or close.
  int error() const { return error_; }

 protected:
  int_type overflow(int_type c) override;
  int sync() override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;

 private:
  // Writes [data, data + n) whole; on failure records errno and returns false.
  bool write_all(const char* data, std::size_t n);
  bool flush_buffer();

  int fd_ = -1;
  int error_ = 0;
  std::array<char, 1 << 16> buffer_{};
};

}  // namespace pagesim::sim

#include "sim/output/file_buffer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace pagesim::sim {

FileBuffer::~FileBuffer() {
  if (fd_ >= 0) ::close(fd_);
}

int FileBuffer::open(const std::filesystem::path& path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) error_ = errno;
  setp(buffer_.data(), buffer_.data() + buffer_.size());
  return error_;
}

bool FileBuffer::write_all(const char* data, std::size_t n) {
  if (error_ != 0) return false;
  if (fd_ < 0) {
    error_ = EBADF;
    return false;
  }
  while (n > 0) {
    const ssize_t written = ::write(fd_, data, n);
    if (written < 0) {
      if (errno == EINTR) continue;
      error_ = errno;
      return false;
    }
    data += written;
    n -= static_cast<std::size_t>(written);
  }
  return true;
}

bool FileBuffer::flush_buffer() {
  const std::size_t n = static_cast<std::size_t>(pptr() - pbase());
  setp(buffer_.data(), buffer_.data() + buffer_.size());
  return n == 0 ? error_ == 0 : write_all(buffer_.data(), n);
}

FileBuffer::int_type FileBuffer::overflow(int_type c) {
  if (!flush_buffer()) return traits_type::eof();
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  *pptr() = traits_type::to_char_type(c);
  pbump(1);
  return c;
}

int FileBuffer::sync() { return flush_buffer() ? 0 : -1; }

std::streamsize FileBuffer::xsputn(const char* s, std::streamsize n) {
  if (n <= epptr() - pptr()) {  // the fast path: into the buffer
    traits_type::copy(pptr(), s, static_cast<std::size_t>(n));
    pbump(static_cast<int>(n));
    return n;
  }
  if (!flush_buffer() || !write_all(s, static_cast<std::size_t>(n))) return 0;
  return n;
}

int FileBuffer::close() {
  flush_buffer();
  if (fd_ >= 0 && ::close(fd_) != 0 && error_ == 0) error_ = errno;
  fd_ = -1;
  return error_;
}

}  // namespace pagesim::sim

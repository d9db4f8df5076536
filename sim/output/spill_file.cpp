#include "sim/output/spill_file.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <unistd.h>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace pagesim::sim {

SpillFile::SpillFile(std::string holds) : holds_(std::move(holds)) {
  const char* tmpdir = std::getenv("TMPDIR");
  folder_ = tmpdir && *tmpdir ? tmpdir : "/tmp";
  std::string path = folder_ + "/pagesim-spill-XXXXXX";
  std::vector<char> name(path.begin(), path.end());
  name.push_back('\0');
  fd_ = ::mkstemp(name.data());
  if (fd_ < 0) fail("cannot create a temporary file");
  ::unlink(name.data());  // anonymous from now on: the space is freed when fd_ closes
}

SpillFile::~SpillFile() {
  if (fd_ >= 0) ::close(fd_);
}

SpillFile::SpillFile(SpillFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      size_(std::exchange(other.size_, 0)),
      holds_(std::move(other.holds_)),
      folder_(std::move(other.folder_)) {}

SpillFile& SpillFile::operator=(SpillFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = std::exchange(other.size_, 0);
    holds_ = std::move(other.holds_);
    folder_ = std::move(other.folder_);
  }
  return *this;
}

std::uint64_t SpillFile::append(const void* data, std::size_t bytes) {
  const std::uint64_t at = size_;
  const auto* p = static_cast<const char*>(data);
  std::size_t done = 0;
  while (done < bytes) {
    const ssize_t n = ::pwrite(fd_, p + done, bytes - done, static_cast<off_t>(at + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("cannot write to its temporary file");
    done += static_cast<std::size_t>(n);
  }
  size_ += bytes;
  return at;
}

void SpillFile::read(std::uint64_t offset, void* data, std::size_t bytes) const {
  auto* p = static_cast<char*>(data);
  std::size_t done = 0;
  while (done < bytes) {
    const ssize_t n = ::pread(fd_, p + done, bytes - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("cannot read back its temporary file");
    if (n == 0) {
      errno = 0;
      fail("found its temporary file shorter than written");
    }
    done += static_cast<std::size_t>(n);
  }
}

void SpillFile::clear() {
  if (::ftruncate(fd_, 0) != 0) fail("cannot truncate its temporary file");
  size_ = 0;
}

void SpillFile::fail(const char* what) const {
  const int err = errno;
  throw std::runtime_error(fmt::format("spilling {} to disk: {} in '{}' ({}); set TMPDIR to a folder with room",
                                       holds_, what, folder_, err ? std::strerror(err) : "unexpected end of file"));
}

}  // namespace pagesim::sim

#include "sim/output/folder_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <string>
#include <system_error>

#include <fmt/format.h>

namespace pagesim::sim {
namespace {

// The pid the lock file records; 0 if none yet.
pid_t recorded_pid(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  long pid = 0;
  if (n > 0) std::from_chars(buf, buf + n, pid);
  return pid > 0 ? static_cast<pid_t>(pid) : 0;
}

[[noreturn]] void fail(const std::string& what, const std::filesystem::path& path) {
  throw std::system_error(errno, std::generic_category(), fmt::format("{} '{}'", what, path.string()));
}

}  // namespace

FolderBusy::FolderBusy(const std::filesystem::path& dir, pid_t holder)
    : std::runtime_error(fmt::format("output folder '{}' is in use by another pagesim run ({}, holding '{}'); wait "
                                     "for it to finish or choose another --out",
                                     dir.string(), holder > 0 ? fmt::format("pid {}", holder) : "pid not yet known",
                                     (dir / FolderLock::kFileName).string())),
      holder_(holder) {}

FolderLock::FolderLock(const std::filesystem::path& dir) : path_(dir / kFileName) {
  // A holder removes the file before unlocking: a lock won on a removed file is retried.
  for (;;) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) fail("cannot create the lock file", path_);
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      const pid_t holder = err == EWOULDBLOCK ? recorded_pid(fd_) : 0;
      ::close(fd_);
      fd_ = -1;
      if (err == EWOULDBLOCK) throw FolderBusy(dir, holder);
      errno = err;
      fail("cannot lock", path_);
    }
    struct stat locked {}, named {};
    if (::fstat(fd_, &locked) == 0 && ::stat(path_.c_str(), &named) == 0 && locked.st_dev == named.st_dev &&
        locked.st_ino == named.st_ino)
      break;
    ::close(fd_);
  }
  const std::string pid = fmt::format("{}\n", static_cast<long>(::getpid()));
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    const int err = errno;
    ::unlink(path_.c_str());
    ::close(fd_);
    errno = err;
    fail("cannot write the lock file", path_);
  }
}

std::optional<pid_t> FolderLock::holder(const std::filesystem::path& dir) {
  const std::filesystem::path path = dir / kFileName;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;  // a holder's file exists for as long as it holds the lock
  std::optional<pid_t> held;
  if (::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK) held = recorded_pid(fd);
  ::close(fd);  // drops the shared lock if it was taken
  return held;
}

FolderLock::~FolderLock() {
  ::unlink(path_.c_str());
  ::close(fd_);
}

}  // namespace pagesim::sim

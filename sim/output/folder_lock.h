// FolderLock: one writer per output folder at a time.
//
// Holds an flock(2) on "<dir>/.pagesim.lock", a file that records the holder's pid. A second
// FolderLock on the same folder — from another process, or another object in this one
// (each opens the file anew, and flock locks belong to the open file) — fails at once with
// FolderBusy naming the folder and the holder's pid; it never waits. The kernel drops the
// lock when the holder exits however it exits (SIGKILL included), so a crashed run never
// blocks the next one. The destructor removes the lock file before releasing the lock;
// acquiring checks that the file it locked is still the one at the path (else retries), so
// a lock taken on a file being removed never counts. holder() asks whether another writer
// holds a folder without taking it. Not copyable; the object is used by one thread.
#pragma once

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <sys/types.h>

namespace pagesim::sim {

// The folder is locked by another writer. holder_pid(): its pid, 0 when it had not yet
// recorded one.
class FolderBusy : public std::runtime_error {
 public:
  FolderBusy(const std::filesystem::path& dir, pid_t holder);
  pid_t holder_pid() const { return holder_; }

 private:
  pid_t holder_;
};

class FolderLock {
 public:
  static constexpr const char* kFileName = ".pagesim.lock";

  // Locks `dir`. REQUIRES: `dir` exists. Throws FolderBusy if another writer holds it,
  // std::system_error if the lock file cannot be created.
  explicit FolderLock(const std::filesystem::path& dir);
  ~FolderLock();

  // Whether a writer holds `dir`'s lock now: its pid (0 when it had not yet recorded one), or
  // nullopt when none does (no lock file, or one that nobody holds). Creates nothing and never
  // waits; it holds a shared lock on the file for an instant, so a writer locking `dir` at that
  // very instant finds it busy.
  static std::optional<pid_t> holder(const std::filesystem::path& dir);
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace pagesim::sim

// AtomicFile: an output file that appears whole or not at all.
//
// Writes go to a temporary beside the destination, "<path>.tmp.<pid>.<k>" (k: hex, unique
// among this process's live AtomicFiles), so two processes — or two objects in one process —
// writing the same destination never share a temporary. commit() flushes and renames it over
// <path>. If the object is destroyed without commit() (an exception unwound the run, or a
// signal stopped it: sim/cli/interrupt_watcher.h), the temporary is removed, so no
// half-written result is left behind. A process killed outright (SIGKILL) leaves its
// temporaries; remove_stale_temporaries() removes those of processes that no longer exist.
// Not copyable; not thread-safe (one object, one thread; distinct objects are independent).
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <sys/types.h>

#include "sim/output/file_buffer.h"

namespace pagesim::sim {

class AtomicFile {
 public:
  // Creates parent folders as needed. Throws std::runtime_error naming the path and the
  // system's reason on failure.
  explicit AtomicFile(std::filesystem::path path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ostream& stream() { return out_; }
  // Flushes and renames into place. Throws std::runtime_error on an I/O error, naming the
  // destination's file and folder and the system's reason ("No space left on device").
  void commit();

  // The temporary's path (valid for the object's lifetime; gone after commit()).
  const std::filesystem::path& temporary_path() const { return tmp_; }

 private:
  std::filesystem::path path_;
  std::filesystem::path tmp_;
  FileBuffer buffer_;
  std::ostream out_{&buffer_};
  bool committed_ = false;
};

// Writes `text` to `path` atomically.
void write_file_atomically(const std::filesystem::path& path, const std::string& text);

// The pid a temporary's name records ("<name>.tmp.<pid>.<k>"), or nullopt for a name that is
// not an AtomicFile temporary.
std::optional<pid_t> temporary_owner(const std::string& file_name);

// Removes the temporaries in `dir` (not below it) whose process no longer exists. Those of
// live processes are left alone (a pid reused since then is indistinguishable: its files are
// ignored, never removed). Returns the number removed; a missing `dir` is not an error.
int remove_stale_temporaries(const std::filesystem::path& dir);

}  // namespace pagesim::sim

// ScratchFile: a fuzz input written to a file of its own, for the readers that take a path.
//
// The name is unique per process and per input (mkstemp in $TMPDIR, default /tmp), so
// harnesses running in parallel (-jobs, -workers) or at once in CI never share a file. The
// file is removed when the ScratchFile goes out of scope, also when the code under test
// throws. Not thread-safe; one per input.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace pagesim::fuzz {

class ScratchFile {
 public:
  // Writes `bytes` to a new file. Aborts if the file cannot be written: the harness, not
  // the input, is broken then, and libFuzzer reports the abort.
  explicit ScratchFile(std::string_view bytes, std::string_view suffix = "") {
    const char* dir = std::getenv("TMPDIR");
    path_ = std::string(dir && *dir ? dir : "/tmp") + "/pagesim-fuzz-XXXXXX" + std::string(suffix);
    const int fd = mkstemps(path_.data(), static_cast<int>(suffix.size()));
    if (fd < 0) {
      std::perror("pagesim fuzz: mkstemps");
      std::abort();
    }
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n <= 0) {
        std::perror("pagesim fuzz: write");
        std::abort();
      }
      done += static_cast<std::size_t>(n);
    }
    ::close(fd);
  }
  ~ScratchFile() { std::remove(path_.c_str()); }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace pagesim::fuzz

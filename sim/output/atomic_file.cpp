#include "sim/output/atomic_file.h"

#include <signal.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

namespace pagesim::sim {
namespace {

constexpr std::string_view kTemporaryInfix = ".tmp.";

bool process_exists(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

// "cannot write 'requests.csv' in output folder 'out': No space left on device": the file a
// user knows (not its temporary) and the folder to free space in.
std::runtime_error write_error(const std::filesystem::path& path, int error) {
  const std::filesystem::path folder = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  return std::runtime_error(fmt::format("cannot write '{}' in output folder '{}': {}", path.filename().string(),
                                        folder.string(), error != 0 ? std::strerror(error) : "I/O error"));
}

}  // namespace

// The object's address tells apart the temporaries of live objects in one process without
// a process-wide counter (no global state); the pid tells processes apart.
AtomicFile::AtomicFile(std::filesystem::path path) : path_(std::move(path)) {
  tmp_ = path_;
  tmp_ += fmt::format("{}{}.{:x}", kTemporaryInfix, static_cast<long>(::getpid()),
                      reinterpret_cast<std::uintptr_t>(this));
  if (path_.has_parent_path()) std::filesystem::create_directories(path_.parent_path());
  if (const int error = buffer_.open(tmp_); error != 0) throw write_error(path_, error);
}

AtomicFile::~AtomicFile() {
  if (committed_) return;
  buffer_.close();
  std::error_code ec;
  std::filesystem::remove(tmp_, ec);
}

void AtomicFile::commit() {
  out_.flush();
  const int error = buffer_.close();
  if (error != 0 || !out_) throw write_error(path_, error);
  std::filesystem::rename(tmp_, path_);
  committed_ = true;
}

void write_file_atomically(const std::filesystem::path& path, const std::string& text) {
  AtomicFile f(path);
  f.stream() << text;
  f.commit();
}

std::optional<pid_t> temporary_owner(const std::string& name) {
  const std::size_t at = name.rfind(kTemporaryInfix);
  if (at == std::string::npos || at == 0) return std::nullopt;
  const std::string_view rest = std::string_view(name).substr(at + kTemporaryInfix.size());
  const std::size_t dot = rest.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == rest.size()) return std::nullopt;
  long pid = 0;
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + dot, pid);
  if (ec != std::errc() || end != rest.data() + dot || pid <= 0) return std::nullopt;
  for (char c : rest.substr(dot + 1))
    if (!std::isxdigit(static_cast<unsigned char>(c))) return std::nullopt;
  return static_cast<pid_t>(pid);
}

int remove_stale_temporaries(const std::filesystem::path& dir) {
  std::error_code ec;
  int removed = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file(ec)) continue;
    const std::string name = entry.path().filename().string();
    const std::optional<pid_t> owner = temporary_owner(name);
    if (owner && !process_exists(*owner)) removed += std::filesystem::remove(entry.path(), ec) ? 1 : 0;
  }
  return removed;
}

}  // namespace pagesim::sim

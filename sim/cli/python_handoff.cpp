#include "sim/cli/python_handoff.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

extern char** environ;

namespace pagesim::sim::cli {
namespace {

constexpr const char* kExplicitPython = "PAGESIM_PYTHON";

// Whether `python` runs and finds every module in `needs` (quietly: a missing candidate is no
// error). It looks the modules up without importing them, which would cost the hand-off a
// second import.
bool finds_modules(const std::string& python, const std::vector<std::string>& needs) {
  std::vector<std::string> words = {
      python, "-c", "import importlib.util, sys; sys.exit(any(importlib.util.find_spec(m) is None for m in sys.argv[1:]))"};
  words.insert(words.end(), needs.begin(), needs.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t quiet;
  posix_spawn_file_actions_init(&quiet);
  posix_spawn_file_actions_addopen(&quiet, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&quiet, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, python.c_str(), &quiet, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&quiet);
  if (rc != 0) return false;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

const char* explicit_python() {
  const char* env = std::getenv(kExplicitPython);
  return env && *env ? env : nullptr;
}

}  // namespace

std::filesystem::path python_dir() {
  if (const char* dir = std::getenv("PAGESIM_PYTHON_DIR"); dir && *dir) return dir;
  return std::filesystem::path(PAGESIM_SOURCE_DIR) / "python";
}

std::vector<std::string> python_candidates(const std::filesystem::path& repo) {
  if (const char* chosen = explicit_python()) return {chosen};
  return {(repo / ".venv" / "bin" / "python").string(), "python3", "/usr/bin/python3"};
}

std::optional<std::string> find_python(const std::filesystem::path& repo, const std::vector<std::string>& needs) {
  for (const std::string& candidate : python_candidates(repo))
    if (finds_modules(candidate, needs)) return candidate;
  return std::nullopt;
}

std::string exec_python_module(const PythonHandoff& handoff, const std::vector<std::string>& args) {
  std::string path;
  for (const std::filesystem::path& dir : handoff.path) path += (path.empty() ? "" : ":") + dir.string();
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) path += (path.empty() ? "" : ":") + std::string(old);
  if (!path.empty()) ::setenv("PYTHONPATH", path.c_str(), 1);

  const std::filesystem::path repo = python_dir().parent_path();
  const std::optional<std::string> python = find_python(repo, handoff.needs);
  const std::string needs = fmt::format("{}", fmt::join(handoff.needs, ", "));
  if (!python) {
    if (const char* chosen = explicit_python())
      return fmt::format("{} needs a Python that finds {}: {}={} does not ({})", handoff.module, needs,
                         kExplicitPython, chosen, handoff.install_hint);
    return fmt::format("{} needs a Python that finds {}: none of {} does (set {} to one that does, or {})",
                       handoff.module, needs, fmt::join(python_candidates(repo), ", "), kExplicitPython,
                       handoff.install_hint);
  }
  std::vector<std::string> words = {*python, "-m", handoff.module};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  ::execvp(python->c_str(), argv.data());
  return fmt::format("could not start {} for {}: {}", *python, handoff.module, std::strerror(errno));
}

}  // namespace pagesim::sim::cli

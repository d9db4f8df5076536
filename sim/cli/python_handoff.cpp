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

extern char** environ;

namespace pagesim::sim::cli {
namespace {

// Whether `python` runs and finds matplotlib (quietly: a missing candidate is no error). It
// looks the package up without importing it, which would cost the plot a second import.
bool has_matplotlib(const std::string& python) {
  const char* argv[] = {python.c_str(), "-c",
                        "import importlib.util, sys; sys.exit(importlib.util.find_spec('matplotlib') is None)", nullptr};
  posix_spawn_file_actions_t quiet;
  posix_spawn_file_actions_init(&quiet);
  posix_spawn_file_actions_addopen(&quiet, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&quiet, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, python.c_str(), &quiet, nullptr, const_cast<char**>(argv), environ);
  posix_spawn_file_actions_destroy(&quiet);
  if (rc != 0) return false;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

std::filesystem::path python_dir() {
  if (const char* dir = std::getenv("PAGESIM_PYTHON_DIR"); dir && *dir) return dir;
  return std::filesystem::path(PAGESIM_SOURCE_DIR) / "python";
}

std::optional<std::string> find_python(const std::filesystem::path& repo) {
  const std::filesystem::path venv = repo / ".venv" / "bin" / "python";
  for (const std::string& candidate : {venv.string(), std::string("python3"), std::string("/usr/bin/python3")})
    if (has_matplotlib(candidate)) return candidate;
  return std::nullopt;
}

std::string exec_python_module(const std::string& module, const std::vector<std::string>& args) {
  const std::filesystem::path dir = python_dir();
  const std::optional<std::string> python = find_python(dir.parent_path());
  if (!python)
    return fmt::format("{} needs a Python 3 with matplotlib: none of {}, python3 on PATH or /usr/bin/python3 has it "
                       "(create the project's venv, or apt-get install python3-matplotlib)",
                       module, (dir.parent_path() / ".venv" / "bin" / "python").string());
  const char* old = std::getenv("PYTHONPATH");
  const std::string path = dir.string() + (old && *old ? ":" + std::string(old) : "");
  ::setenv("PYTHONPATH", path.c_str(), 1);
  std::vector<std::string> words = {*python, "-m", module};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  ::execvp(python->c_str(), argv.data());
  return fmt::format("could not start {} for {}: {}", *python, module, std::strerror(errno));
}

}  // namespace pagesim::sim::cli

#include "sim/cli/ray_handoff.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <vector>

#include <fmt/format.h>

// Set by sim/CMakeLists.txt: this build's Python package folder and the project's .venv Python.
#ifndef PAGESIM_PYTHON_PACKAGE_DIR
#define PAGESIM_PYTHON_PACKAGE_DIR ""
#endif
#ifndef PAGESIM_VENV_PYTHON
#define PAGESIM_VENV_PYTHON ""
#endif

namespace pagesim::sim::cli {

std::string exec_ray_sweep(const CommandLine& cl, const std::filesystem::path& out) {
  std::string python = "python3";
  if (const char* env = std::getenv("PAGESIM_PYTHON"); env && *env) python = env;
  else if (std::string venv = PAGESIM_VENV_PYTHON; !venv.empty() && ::access(venv.c_str(), X_OK) == 0) python = venv;

  std::vector<std::string> args = {python, "-m", "pagesim", "sweep", cl.file, "--out", out.string()};
  for (const auto& s : cl.sets) args.insert(args.end(), {"--set", s});
  args.insert(args.end(), {"--executor", "ray"});
  if (!cl.ray_address.empty()) args.insert(args.end(), {"--address", cl.ray_address});
  if (cl.overwrite) args.push_back("--overwrite");
  if (cl.resume) args.push_back("--resume");
  if (cl.quiet) args.push_back("--quiet");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  const std::filesystem::path package = PAGESIM_PYTHON_PACKAGE_DIR;
  std::error_code ec;
  if (!package.empty() && std::filesystem::exists(package / "pagesim" / "__init__.py", ec)) {
    const char* old = std::getenv("PYTHONPATH");
    const std::string path = old && *old ? package.string() + ":" + old : package.string();
    ::setenv("PYTHONPATH", path.c_str(), 1);
  }
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  ::execvp(python.c_str(), argv.data());
  const int error = errno;  // execvp returned: it failed
  return fmt::format("--ray runs the sweep through the pagesim Python package with {}, which could not be started: "
                     "{}; set PAGESIM_PYTHON to a Python that has pagesim and ray (README: Python package)",
                     python, std::strerror(error));
}

}  // namespace pagesim::sim::cli

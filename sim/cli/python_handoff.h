// The seam between `pagesim` and its Python parts. Two commands hand over to a Python module
// by replacing this process with `PYTHON -m MODULE ARGS...`:
//   `pagesim plot`      -> pagesim.plot (python/pagesim/plot.py), needs matplotlib;
//   `pagesim run --ray` -> pagesim sweep (ray_handoff.h), needs pagesim and ray.
// One rule picks PYTHON for every hand-off (and .ci/python follows it for the test scripts):
//   1. $PAGESIM_PYTHON when set, alone: an explicit choice is used or reported, never passed over;
//   2. else the first of <repo>/.venv/bin/python (the project's venv, .ci/venv), python3 on
//      PATH, /usr/bin/python3 (Debian's, which a pyenv or venv python3 on PATH hides)
//      that finds every module the caller needs.
// <repo> is the parent of python_dir(). A module is "found" when importlib.util.find_spec
// locates it, with the hand-off's PYTHONPATH in force; nothing is imported by the check.
// Stateless; the functions touch only the calling process (its environment, and exec).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace pagesim::sim::cli {

// What one command hands over to Python.
struct PythonHandoff {
  std::string module;                     // run as `PYTHON -m module`
  std::vector<std::string> needs;         // top-level modules PYTHON must find (e.g. "matplotlib")
  std::vector<std::filesystem::path> path;  // folders put first on PYTHONPATH, in this order
  std::string install_hint;               // how to get `needs`, for the error message
};

// The folder of pagesim's Python sources: $PAGESIM_PYTHON_DIR when set, else python/ of the
// source tree this pagesim was built from.
std::filesystem::path python_dir();

// The interpreters the rule above tries, in order, for a checkout at `repo`.
std::vector<std::string> python_candidates(const std::filesystem::path& repo);

// The first candidate that finds every module in `needs` under the current environment, or
// nullopt when none does (or $PAGESIM_PYTHON is set and does not).
std::optional<std::string> find_python(const std::filesystem::path& repo, const std::vector<std::string>& needs);

// Prepends `handoff.path` to PYTHONPATH, picks PYTHON by the rule above and replaces this
// process with `PYTHON -m handoff.module args...`. Returns only when that fails, with a
// one-line message naming the interpreters tried, the modules needed and handoff.install_hint.
std::string exec_python_module(const PythonHandoff& handoff, const std::vector<std::string>& args);

}  // namespace pagesim::sim::cli

// The seam between `pagesim` and its Python parts: `pagesim plot` runs
// python/pagesim_report/plot.py, found in the source tree this pagesim was built from
// (PAGESIM_PYTHON_DIR in the environment overrides it), under the first interpreter that has
// matplotlib, looked for as .ci/python does but preferring the project's virtual
// environment: <repo>/.venv/bin/python, then python3 on PATH, then /usr/bin/python3.
// Stateless; the functions touch only the calling process.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace pagesim::sim::cli {

// The folder holding the pagesim_report package.
std::filesystem::path python_dir();

// The interpreter to use, or nullopt when none of the candidates imports matplotlib.
std::optional<std::string> find_python(const std::filesystem::path& repo);

// Replaces this process with `python -m module args...`, python_dir() first on PYTHONPATH.
// Returns only when that fails, with a one-line message saying why and what to install.
std::string exec_python_module(const std::string& module, const std::vector<std::string>& args);

}  // namespace pagesim::sim::cli

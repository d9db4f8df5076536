// `pagesim run EXP.yaml --ray [ADDRESS]`: a sweep's points as Ray tasks. Ray is driven from
// Python, by the pagesim package's sweep() (python/pagesim/sweep.py), which takes the same
// steps as a local run through the same C++ functions; so that there is one implementation,
// pagesim parses its command line, then replaces itself (python_handoff.h, which picks the
// interpreter: one that finds pagesim and ray) with
//   PYTHON -m pagesim sweep EXP.yaml --out OUT [--set ...] --executor ray [--address A]
//          [--overwrite | --resume] [--quiet]
// The package is found in this build's python/ folder when its compiled module was built
// there (PAGESIM_PYTHON_PACKAGE_DIR; building pagesim builds it when the build has the
// package), else wherever that Python finds it (pip install .). A build folder holding the
// package's Python files without its module is passed over: importing it would fail
// ("cannot import name '_core' from partially initialized module 'pagesim'").
// Stateless; the function touches only the calling process.
#pragma once

#include <filesystem>
#include <string>

#include "sim/cli/command_line.h"

namespace pagesim::sim::cli {

// Whether `package_dir`/pagesim holds the package with its compiled module (_core*.so).
bool has_compiled_module(const std::filesystem::path& package_dir);

// Replaces this process as above, for the run command `cl` writing into `out`. Returns only
// when no interpreter qualifies or the exec fails, with a one-line message saying why.
std::string exec_ray_sweep(const CommandLine& cl, const std::filesystem::path& out);

}  // namespace pagesim::sim::cli

// Build info: which pagesim wrote a result. Its version (the CMake project's, which
// pyproject.toml repeats) and the git commit of the source tree it was built from, baked in
// at build time by cmake/PagesimBuildInfo.cmake. summary.json records both
// ("pagesim_version", "pagesim_commit"); `pagesim --version` prints them.
// Constant for the life of the process; safe from any thread.
#pragma once

#include <string>
#include <string_view>

namespace pagesim::sim {

// "0.1.0".
std::string_view pagesim_version();

// The commit's 40 hex digits, "-dirty" appended when tracked files differed from it at
// build time; "unknown" when not built from a git checkout.
std::string_view pagesim_commit();

// "pagesim 0.1.0 (commit <hash>)": what `pagesim --version` prints.
inline std::string version_text() {
  return "pagesim " + std::string(pagesim_version()) + " (commit " + std::string(pagesim_commit()) + ")";
}

}  // namespace pagesim::sim

#include "sim/cli/ray_handoff.h"

#include <vector>

#include "sim/cli/python_handoff.h"

// Set by sim/CMakeLists.txt: this build's Python package folder.
#ifndef PAGESIM_PYTHON_PACKAGE_DIR
#define PAGESIM_PYTHON_PACKAGE_DIR ""
#endif

namespace pagesim::sim::cli {

bool has_compiled_module(const std::filesystem::path& package_dir) {
  std::error_code ec;
  if (package_dir.empty() || !std::filesystem::is_regular_file(package_dir / "pagesim" / "__init__.py", ec)) return false;
  for (const auto& entry : std::filesystem::directory_iterator(package_dir / "pagesim", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("_core.") && name.ends_with(".so")) return true;
  }
  return false;
}

std::string exec_ray_sweep(const CommandLine& cl, const std::filesystem::path& out) {
  std::vector<std::string> args = {"sweep", cl.file, "--out", out.string()};
  for (const auto& s : cl.sets) args.insert(args.end(), {"--set", s});
  args.insert(args.end(), {"--executor", "ray"});
  if (!cl.ray_address.empty()) args.insert(args.end(), {"--address", cl.ray_address});
  if (cl.overwrite) args.push_back("--overwrite");
  if (cl.resume) args.push_back("--resume");
  if (cl.quiet) args.push_back("--quiet");

  PythonHandoff handoff{.module = "pagesim",
                        .needs = {"pagesim", "ray"},
                        .path = {},
                        .install_hint = "build the package (README command 2) and make the project's venv with "
                                        ".ci/venv, which installs ray; README: Python package"};
  const std::filesystem::path package = PAGESIM_PYTHON_PACKAGE_DIR;
  if (has_compiled_module(package)) handoff.path.push_back(package);
  return exec_python_module(handoff, args);
}

}  // namespace pagesim::sim::cli

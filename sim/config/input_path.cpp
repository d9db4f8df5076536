#include "sim/config/input_path.h"

#include <cstdlib>
#include <system_error>

#include <fmt/format.h>

// Set by sim/CMakeLists.txt: the source tree this library was built from.
#ifndef PAGESIM_SOURCE_DIR
#define PAGESIM_SOURCE_DIR ""
#endif

namespace pagesim::sim {
namespace {

namespace fs = std::filesystem;

bool exists_as(const fs::path& p, InputKind kind) {
  std::error_code ec;
  return kind == InputKind::kFolder ? fs::is_directory(p, ec) : fs::exists(p, ec) && !fs::is_directory(p, ec);
}

fs::path absolute_normal(const fs::path& p) {
  std::error_code ec;
  const fs::path a = fs::absolute(p, ec);
  return (ec ? p : a).lexically_normal();
}

// `p` relative to the bundled data's root when it lies inside it, else `p` (absolute).
std::string portable(const fs::path& p) {
  const fs::path root = bundled_root();
  if (!root.empty()) {
    const fs::path rel = p.lexically_relative(root);
    if (!rel.empty() && *rel.begin() != ".." && rel != ".") return rel.generic_string();
  }
  return p.generic_string();
}

// The installed package's data folder when this process runs from one: <pkg>/bin/pagesim
// beside <pkg>/data/PAGESIM_DATA (python/CMakeLists.txt installs both); else empty.
fs::path installed_data_beside_executable() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec || exe.empty()) return {};
  const fs::path data = exe.parent_path().parent_path() / "data";
  return fs::is_regular_file(data / kBundledDataMarker, ec) ? data : fs::path();
}

}  // namespace

fs::path bundled_root() {
  if (const char* dir = std::getenv("PAGESIM_DATA_DIR"); dir && *dir) return absolute_normal(dir);
  if (const fs::path installed = installed_data_beside_executable(); !installed.empty()) return absolute_normal(installed);
  const fs::path root = PAGESIM_SOURCE_DIR;
  return root.empty() ? root : absolute_normal(root);
}

fs::path experiment_dir(const std::string& file) {
  std::error_code ec;
  // A file in the working directory has an empty parent, which absolute() leaves empty.
  if (const fs::path parent = fs::path(file).parent_path();
      !file.empty() && fs::is_regular_file(file, ec) && !parent.empty())
    return absolute_normal(parent);
  return absolute_normal(fs::current_path(ec));
}

std::vector<fs::path> input_search_folders(const fs::path& base_dir) {
  std::vector<fs::path> folders = {base_dir};
  if (const fs::path root = bundled_root(); !root.empty()) {
    folders.push_back(root / "traces" / "data");
    folders.push_back(root);
  }
  return folders;
}

std::optional<std::string> find_input(const std::string& written, const fs::path& base_dir, InputKind kind) {
  const fs::path p(written);
  if (p.is_absolute()) return exists_as(p, kind) ? std::optional(portable(p.lexically_normal())) : std::nullopt;
  for (const fs::path& folder : input_search_folders(base_dir))
    if (const fs::path candidate = absolute_normal(folder / p); exists_as(candidate, kind)) return portable(candidate);
  return std::nullopt;
}

fs::path input_file(const std::string& portable_path) {
  const fs::path p(portable_path);
  if (p.is_absolute() || p.empty()) return p;
  if (const fs::path root = bundled_root(); !root.empty()) {
    std::error_code ec;
    if (fs::exists(root / p, ec)) return root / p;
  }
  return p;
}

std::string input_not_found(const std::string& written, const fs::path& base_dir, InputKind kind) {
  const char* what = kind == InputKind::kFolder ? "an existing folder" : "an existing file";
  if (fs::path(written).is_absolute()) return fmt::format("expected {}, found '{}': no such path", what, written);
  std::string where;
  const std::vector<fs::path> folders = input_search_folders(base_dir);
  for (std::size_t i = 0; i < folders.size(); ++i)
    where += (i == 0 ? "" : i + 1 == folders.size() ? " and " : ", ") + folders[i].string();
  return fmt::format("expected {}, found '{}': not in {} (a relative path is looked up in the experiment file's "
                     "folder, or the working directory for a --set value, then in pagesim's bundled data)",
                     what, written, where);
}

}  // namespace pagesim::sim

#include "sim/output/created_folder.h"

#include <system_error>

namespace pagesim::sim {

CreatedFolder::CreatedFolder(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::path start = dir.lexically_normal();
  if (!start.has_filename()) start = start.parent_path();  // "out/x/" is "out/x"
  for (std::filesystem::path p = start; !p.empty() && !std::filesystem::exists(p, ec); p = p.parent_path()) {
    created_.push_back(p);
    if (p == p.parent_path()) break;
  }
  std::filesystem::create_directories(dir);
}

CreatedFolder::~CreatedFolder() {
  if (keep_) return;
  std::error_code ec;
  for (const auto& p : created_)
    if (std::filesystem::is_empty(p, ec) && !ec) std::filesystem::remove(p, ec);
}

}  // namespace pagesim::sim

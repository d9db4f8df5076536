#include "sim/config/config_origin.h"

namespace pagesim::sim {

int ConfigOrigin::line(std::string_view path) const {
  while (!path.empty()) {
    if (const auto it = lines_.find(path); it != lines_.end()) return it->second;
    // Up one level: "a.b[2]" -> "a.b" -> "a".
    const std::size_t cut = path.find_last_of(".[");
    path = path.substr(0, cut == std::string_view::npos ? 0 : cut);
  }
  return 0;
}

}  // namespace pagesim::sim

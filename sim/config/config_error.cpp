#include "sim/config/config_error.h"

#include <fmt/format.h>

namespace pagesim::sim {
namespace {

std::string render(const std::string& file, int line, const std::string& key, const std::string& message) {
  std::string where = line > 0 ? fmt::format("{}:{}", file, line) : file;
  return key.empty() ? fmt::format("{}: {}", where, message) : fmt::format("{}: {}: {}", where, key, message);
}

}  // namespace

ConfigError::ConfigError(const std::string& file, int line, const std::string& key, const std::string& message)
    : std::runtime_error(render(file, line, key, message)), file_(file), line_(line), key_(key) {}

}  // namespace pagesim::sim

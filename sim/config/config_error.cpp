#include "sim/config/config_error.h"

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>

namespace pagesim::sim {
namespace {

std::string render(const std::string& file, int line, const std::string& key, const std::string& message) {
  std::string where = line > 0 ? fmt::format("{}:{}", file, line) : file;
  return key.empty() ? fmt::format("{}: {}", where, message) : fmt::format("{}: {}: {}", where, key, message);
}

}  // namespace

ConfigError::ConfigError(const std::string& file, int line, const std::string& key, const std::string& message)
    : std::runtime_error(render(file, line, key, message)), file_(file), line_(line), key_(key), message_(message) {}

std::string describe_yaml_error(const YAML::Exception& e) {
  if (const auto* deep = dynamic_cast<const YAML::DeepRecursion*>(&e))
    return fmt::format("collections nested {} levels deep, beyond the YAML parser's limit; expected a shallow "
                       "value (a number, a string or a short list)",
                       deep->depth());
  return e.msg;
}

}  // namespace pagesim::sim

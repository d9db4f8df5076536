#include "sim/config/calibration.h"

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "sim/config/config_error.h"
#include "sim/config/experiment_config.h"
#include "sim/config/input_path.h"
#include "sim/config/yaml_document.h"

namespace pagesim::sim {
namespace {

int line_of(const YAML::Node& n) { return n.Mark().is_null() ? 0 : n.Mark().line + 1; }

// Whether `root` gives the dotted `path` itself (every section along it a map).
bool gives(const YAML::Node& root, const std::string& path) {
  YAML::Node node;
  node.reset(root);
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!node.IsMap()) return false;
    const YAML::Node& cnode = node;
    const YAML::Node next = cnode[key];
    if (!next) return false;
    if (dot == std::string::npos) return true;
    node.reset(next);
    start = dot + 1;
  }
}

}  // namespace

void CalibratedKeys::rethrow(const ConfigError& e) const {
  for (const std::string& k : keys)
    if (e.key() == k || e.key().rfind(k + ".", 0) == 0 || k.rfind(e.key() + ".", 0) == 0)
      throw ConfigError(file, 0, "values." + k,
                        e.message() + " (a value of this calibration file: give the key in the experiment, or set "
                                      "calibration: none)");
  throw e;
}

YAML::Node apply_calibration(const YAML::Node& root, const std::string& file, CalibratedKeys* filled) {
  const YAML::Node named = root["calibration"];
  if (!named || named.IsNull()) return root;
  if (!named.IsScalar())
    throw ConfigError(file, line_of(named), "calibration", "expected the path of a calibration file, or none");
  const std::string written = named.Scalar();
  if (written == kNoCalibration) return root;
  // Looked up as every input path is (input_path.h); a --set value has no line.
  const std::filesystem::path base = experiment_dir(line_of(named) == 0 ? std::string() : file);
  const std::optional<std::string> found = find_input(written, base, InputKind::kFile);
  if (!found)
    throw ConfigError(file, line_of(named), "calibration",
                      input_not_found(written, base, InputKind::kFile) + " (pagesim calibrate writes one)");
  const std::string& path = *found;  // as messages name it
  const std::filesystem::path open = input_file(path);
  // A calibration file is a small YAML file: a device or FIFO (/dev/zero, /dev/stdin) would
  // never end, so only a regular file of at most kMaxCalibrationBytes is read.
  std::error_code ec;
  if (std::filesystem::exists(open, ec) && !std::filesystem::is_regular_file(open, ec))
    throw ConfigError(file, line_of(named), "calibration",
                      "'" + path + "' is not a regular file: expected a calibration file (pagesim calibrate writes one)");
  if (const auto size = std::filesystem::file_size(open, ec); !ec && size > kMaxCalibrationBytes)
    throw ConfigError(file, line_of(named), "calibration",
                      fmt::format("the calibration file '{}' holds {} bytes: expected at most {} (a file of values)",
                                  path, size, kMaxCalibrationBytes));
  std::ifstream in(open);
  if (!in)
    throw ConfigError(file, line_of(named), "calibration",
                      "cannot open the calibration file '" + path + "' (pagesim calibrate writes one)");
  std::ostringstream text;
  text << in.rdbuf();
  const YAML::Node doc = load_yaml_document(text.str(), path);
  const YAML::Node values = doc.IsMap() ? doc["values"] : YAML::Node();
  if (!values || !values.IsMap())
    throw ConfigError(file, line_of(named), "calibration",
                      "the calibration file '" + path + "' has no `values` map of config keys to values");
  YAML::Node out = fork_root(root);
  for (const auto& kv : values) {
    const std::string key = kv.first.as<std::string>();
    if (!kv.second.IsScalar())
      throw ConfigError(path, line_of(kv.second), "values." + key, "expected a single value (a number or a name)");
    if (key == "calibration")
      throw ConfigError(path, line_of(kv.first), "values.calibration", "a calibration file cannot name another");
    if (gives(out, key)) continue;
    // Only within the sections the experiment has: a calibration turns nothing on.
    if (!gives(out, key.substr(0, key.find('.')))) continue;
    // Without the calibration file's marks, which would read as lines of the experiment file.
    set_path(out, key, YAML::Node(kv.second.Scalar()), path);
    if (filled) filled->keys.push_back(key);
  }
  if (filled) filled->file = path;
  return out;
}

}  // namespace pagesim::sim

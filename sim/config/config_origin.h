// ConfigOrigin: where each setting of a parsed experiment came from — the file and, for
// every key the file (or a sweep point) gave, the line of its value — so that checks run
// after parsing (presets, capacity, building the allocator, scheduler and workload) still
// report file:line:key without keeping the YAML around.
//
// Keys are dotted paths as errors print them: "scheduler.max_num_seqs",
// "workload.sampling[1].n". A key set by --set is recorded with line 0 (its text is not a
// line of the file), so errors about it name the key only. Filled by YamlReader while it
// parses; a plain value afterwards, safe to copy and to read from several threads.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "sim/config/config_error.h"

namespace pagesim::sim {

class ConfigOrigin {
 public:
  ConfigOrigin() = default;
  explicit ConfigOrigin(std::string file) : file_(std::move(file)) {}

  // The file the settings were read from, as errors name it.
  const std::string& file() const { return file_; }

  // Notes that the file gave `path`, its value on `line` (1-based; 0: no line, e.g. --set).
  void record(const std::string& path, int line) { lines_[path] = line; }

  // True if the file (or an override) gave `path` itself.
  bool has(std::string_view path) const { return lines_.find(path) != lines_.end(); }

  // True if `path` itself was given without a line: by --set (or a YAML string made in code).
  bool given_without_line(std::string_view path) const {
    const auto it = lines_.find(path);
    return it != lines_.end() && it->second == 0;
  }

  // The line of the deepest key given along `path`: `path`'s own line when it was given,
  // else its nearest given section's ("allocator" for "allocator.kind" left to its default);
  // 0 when none was given or the deepest has no line.
  int line(std::string_view path) const;

  // A ConfigError on `path` at line(path): "file:line: path: message".
  ConfigError error(const std::string& path, const std::string& message) const {
    return ConfigError(file_, line(path), path, message);
  }

 private:
  std::string file_;
  std::map<std::string, int, std::less<>> lines_;  // dotted key path -> line of its value
};

}  // namespace pagesim::sim

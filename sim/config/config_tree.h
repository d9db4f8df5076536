// config_tree: the YAML tree of an experiment before it is parsed: loading a file, --set
// overrides, dotted-key edits and forks of a root that share its nodes (sweeps and replica
// overrides lay their values over one file this way). Nodes keep the line numbers of the
// file they were read from, which ConfigError reports. Not thread-safe: yaml-cpp nodes share
// memory between the roots made from one another.
#pragma once

#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

namespace pagesim::sim {

// Loads a YAML file (ConfigError when it cannot be read or parsed).
YAML::Node load_yaml_file(const std::string& file);

// A dotted key and the value laid over it (by --set, a sweep point or a replicas.overrides entry).
struct KeyAssignment {
  std::string key;
  YAML::Node value;
};

// Applies "a.b.c=value" to `root` (parse_override) and returns what it laid. The value carries
// no line numbers: errors about it name the key only.
KeyAssignment apply_override(YAML::Node& root, const std::string& assignment);

// True when dotted key `inner` is `outer` or lies below it ("a.b" covers "a.b", "a.b.c",
// "a.b[0]").
bool covers(std::string_view outer, std::string_view inner);

// Sets the dotted key `path` of `root` to `value` (stored as is, not copied), creating
// sections on the way. Only `root` and the maps along the path change — those maps are
// replaced by copies — so nodes `root` shares with other roots (fork_root) are never written
// to and keep their source lines. `origin` names where the assignment came from, for errors.
void set_path(YAML::Node& root, const std::string& path, const YAML::Node& value, const std::string& origin);

// Removes the dotted key `path` from `root`, if present, as set_path writes: the maps along
// the path are replaced by copies, so roots sharing them (fork_root) keep the key.
void remove_path(YAML::Node& root, const std::string& path, const std::string& origin);

// A new root map with the same entries as `root` (shared, not cloned: YAML::Clone would
// drop the line numbers errors report). set_path() on either leaves the other unchanged.
YAML::Node fork_root(const YAML::Node& root);

}  // namespace pagesim::sim

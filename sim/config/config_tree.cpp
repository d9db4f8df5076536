#include "sim/config/config_tree.h"

#include <cstddef>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "sim/config/config_error.h"
#include "sim/config/yaml_document.h"

namespace pagesim::sim {
namespace {

// A copy of `n` made of new nodes, without source marks.
YAML::Node detached(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Scalar:
      return YAML::Node(n.Scalar());
    case YAML::NodeType::Sequence: {
      YAML::Node s(YAML::NodeType::Sequence);
      for (const auto& e : n) s.push_back(detached(e));
      return s;
    }
    case YAML::NodeType::Map: {
      YAML::Node m(YAML::NodeType::Map);
      for (const auto& kv : n) m[detached(kv.first)] = detached(kv.second);
      return m;
    }
    case YAML::NodeType::Null:
      return YAML::Node(YAML::NodeType::Null);
    default:
      return YAML::Node();
  }
}

// "a.b.c" -> {a, b, c}; an empty path or an empty key ("a..b", ".a", "a.") throws.
std::vector<std::string> split_path(const std::string& path, const std::string& origin) {
  std::vector<std::string> keys;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    const std::string k = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (k.empty()) throw ConfigError(origin, 0, path, "empty key in the path (expected key.path=value)");
    keys.push_back(k);
    if (dot == std::string::npos) return keys;
    start = dot + 1;
  }
}

}  // namespace

YAML::Node load_yaml_file(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw ConfigError(file, 0, "", "cannot open the file");
  std::ostringstream text;
  text << in.rdbuf();
  return load_yaml_document(text.str(), file);
}

KeyAssignment apply_override(YAML::Node& root, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ConfigError("--set", 0, assignment, "expected key.path=value");
  const std::string path = assignment.substr(0, eq);
  YAML::Node value;
  try {
    value = YAML::Load(assignment.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    throw ConfigError("--set", 0, path, "value is not valid YAML: " + describe_yaml_error(e));
  }
  // Without the marks of the --set text, which would read as lines of the experiment file.
  KeyAssignment laid{path, detached(value)};
  set_path(root, laid.key, laid.value, "--set");
  return laid;
}

bool covers(std::string_view outer, std::string_view inner) {
  if (!inner.starts_with(outer)) return false;
  return inner.size() == outer.size() || inner[outer.size()] == '.' || inner[outer.size()] == '[';
}

YAML::Node fork_root(const YAML::Node& root) {
  YAML::Node copy(YAML::NodeType::Map);
  if (root && root.IsMap())
    for (const auto& kv : root) copy[kv.first] = kv.second;  // shares the entries
  return copy;
}

void set_path(YAML::Node& root, const std::string& path, const YAML::Node& value, const std::string& origin) {
  const std::vector<std::string> keys = split_path(path, origin);
  if (!root || root.IsNull()) root.reset(YAML::Node(YAML::NodeType::Map));
  if (!root.IsMap()) throw ConfigError(origin, 0, path, "cannot set a key: the experiment is not a map of settings");
  // The maps along the path are replaced by copies and nothing below them is written to, so
  // roots sharing subtrees with this one (fork_root) stay as they are, and nodes read from a
  // file keep their line numbers. Two yaml-cpp rules shape the walk: assigning to a Node
  // writes through to the node it refers to (handles move with reset()), and nodes must be
  // created through `root`'s own handles, or the memory that owns them can be freed while
  // the tree still points to them.
  YAML::Node parent;
  parent.reset(root);
  for (std::size_t i = 0; i + 1 < keys.size(); ++i) {
    const YAML::Node& cparent = parent;
    const YAML::Node current = cparent[keys[i]];
    if (current && !current.IsNull() && !current.IsMap())
      throw ConfigError(origin, 0, path, "'" + keys[i] + "' is not a section");
    std::vector<std::pair<YAML::Node, YAML::Node>> entries;
    if (current && current.IsMap())
      for (const auto& kv : current) entries.emplace_back(kv.first, kv.second);
    parent[keys[i]] = YAML::Node(YAML::NodeType::Map);
    YAML::Node section = parent[keys[i]];
    for (const auto& [k, v] : entries) section[k] = v;  // shares the entries
    parent.reset(section);
  }
  parent[keys.back()] = value;
}

void remove_path(YAML::Node& root, const std::string& path, const std::string& origin) {
  const std::vector<std::string> keys = split_path(path, origin);
  if (!root || !root.IsMap()) return;
  // The section that holds the key, read only.
  const YAML::Node& croot = root;
  YAML::Node section = croot;
  for (std::size_t i = 0; i + 1 < keys.size(); ++i) {
    const YAML::Node& csection = section;
    const YAML::Node next = csection[keys[i]];
    if (!next || !next.IsMap()) return;
    section.reset(next);
  }
  if (!static_cast<const YAML::Node&>(section)[keys.back()]) return;
  if (keys.size() == 1) {
    root.remove(keys.back());  // the root map itself is this root's own (fork_root shares only entries)
    return;
  }
  YAML::Node copy(YAML::NodeType::Map);
  for (const auto& kv : section)
    if (kv.first.Scalar() != keys.back()) copy[kv.first] = kv.second;  // shares the entries, as fork_root
  std::string section_path = keys.front();
  for (std::size_t i = 1; i + 1 < keys.size(); ++i) section_path += "." + keys[i];
  set_path(root, section_path, copy, origin);
}

}  // namespace pagesim::sim

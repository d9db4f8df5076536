// YamlReader / YamlWriter: the two visitors that walk an experiment config's field list.
//
// A config struct lists its fields once, in a template visit(V&, Struct&) that calls
// v.field(key, member), v.choice(key, member, names), v.section(key, fn) and
// v.list(key, vector, fn). YamlReader fills the struct from a YAML map — rejecting unknown
// keys and wrong types with a ConfigError that names the file, the line and the dotted key
// path — and YamlWriter emits every field back as YAML. Absent keys keep the defaults.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sim/config/config_error.h"
#include "traces/enum_names.h"

namespace pagesim::sim {

class YamlReader {
 public:
  // REQUIRES: node is a map or null (an absent section).
  YamlReader(const YAML::Node& node, std::string path, const std::string& file)
      : node_(node), path_(std::move(path)), file_(file) {}

  template <class T>
  void field(const char* key, T& value) {
    known_.insert(key);
    YAML::Node n = child(key);
    if (!n) return;
    if (!n.IsScalar()) fail(n, key, "expected " + expected_of<T>() + ", found a " + kind_of(n));
    try {
      value = n.as<T>();
    } catch (const YAML::Exception&) {
      fail(n, key, "expected " + expected_of<T>() + ", found '" + n.Scalar() + "'");
    }
  }

  // An enum written by name, with the table of allowed names.
  template <class E>
  void choice(const char* key, E& value, std::span<const traces::EnumName<E>> names) {
    std::string s;
    field(key, s);
    if (!child(key)) return;
    for (const auto& n : names)
      if (n.name == s) {
        value = n.value;
        return;
      }
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + std::string(n.name);
    fail(child(key), key, "expected one of " + list + ", found '" + s + "'");
  }

  template <class F>
  void section(const char* key, F&& visit_fn) {
    known_.insert(key);
    YAML::Node n = child(key);
    if (n && !n.IsMap()) fail(n, key, "expected a map of settings, found a " + kind_of(n));
    YamlReader sub(n, join(key), file_);
    visit_fn(sub);
    sub.done();
  }

  template <class T, class F>
  void list(const char* key, std::vector<T>& values, F&& visit_elem) {
    known_.insert(key);
    YAML::Node n = child(key);
    if (!n) return;
    if (!n.IsSequence()) fail(n, key, "expected a list, found a " + kind_of(n));
    values.clear();
    for (std::size_t i = 0; i < n.size(); ++i) {
      std::string p = join(key) + "[" + std::to_string(i) + "]";
      if (!n[i].IsMap()) throw ConfigError(file_, line_of(n[i]), p, "expected a map, found a " + kind_of(n[i]));
      YamlReader sub(n[i], p, file_);
      T v{};
      visit_elem(sub, v);
      sub.done();
      values.push_back(std::move(v));
    }
  }

  // Keys consumed elsewhere (e.g. "sweep" at the top level).
  void ignore(const char* key) { known_.insert(key); }

  // Throws ConfigError for the first key no visit asked for, or given twice (YAML forbids
  // it; yaml-cpp would silently read the first).
  void done() const {
    if (!node_ || !node_.IsMap()) return;
    std::map<std::string, int> seen;  // key -> line
    for (const auto& kv : node_) {
      const std::string k = kv.first.Scalar();
      if (auto [it, fresh] = seen.emplace(k, line_of(kv.first)); !fresh)
        throw ConfigError(file_, line_of(kv.first), join(k.c_str()),
                          it->second > 0 ? "duplicate key (first at line " + std::to_string(it->second) + ")"
                                         : std::string("duplicate key"));
      if (known_.count(k)) continue;
      std::string allowed;
      for (const auto& a : known_) allowed += (allowed.empty() ? "" : ", ") + a;
      throw ConfigError(file_, line_of(kv.first), join(k.c_str()), "unknown key (allowed here: " + allowed + ")");
    }
  }

  const std::string& path() const { return path_; }
  const std::string& file() const { return file_; }
  // Line of this section's node (0 when unknown), for errors found after parsing.
  int line() const { return line_of(node_); }

  static int line_of(const YAML::Node& n) {
    if (!n) return 0;
    const YAML::Mark m = n.Mark();
    return m.is_null() ? 0 : m.line + 1;
  }

 private:
  YAML::Node child(const char* key) const {
    if (!node_ || !node_.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
    return node_[key];
  }
  std::string join(const char* key) const { return path_.empty() ? key : path_ + "." + key; }
  [[noreturn]] void fail(const YAML::Node& n, const char* key, const std::string& msg) const {
    throw ConfigError(file_, line_of(n), join(key), msg);
  }
  static std::string kind_of(const YAML::Node& n) {
    return n.IsMap() ? "map" : n.IsSequence() ? "list" : n.IsNull() ? "null" : "scalar";
  }
  template <class T>
  static std::string expected_of() {
    if constexpr (std::is_same_v<T, bool>) return "true or false";
    else if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>) return "a non-negative integer";
    else if constexpr (std::is_integral_v<T>) return "an integer";
    else if constexpr (std::is_floating_point_v<T>) return "a number";
    else return "a string";
  }

  YAML::Node node_;
  std::string path_;
  const std::string& file_;
  std::set<std::string> known_;
};

class YamlWriter {
 public:
  explicit YamlWriter(YAML::Node node) : node_(node) {}

  template <class T>
  void field(const char* key, const T& value) { node_[key] = value; }

  template <class E>
  void choice(const char* key, const E& value, std::span<const traces::EnumName<E>> names) {
    node_[key] = std::string(traces::enum_name(names, value));
  }

  template <class F>
  void section(const char* key, F&& visit_fn) {
    YAML::Node sub(YAML::NodeType::Map);
    YamlWriter w(sub);
    visit_fn(w);
    node_[key] = sub;
  }

  template <class T, class F>
  void list(const char* key, std::vector<T>& values, F&& visit_elem) {
    YAML::Node seq(YAML::NodeType::Sequence);
    for (T& v : values) {
      YAML::Node item(YAML::NodeType::Map);
      YamlWriter w(item);
      visit_elem(w, v);
      seq.push_back(item);
    }
    node_[key] = seq;
  }

  void ignore(const char*) {}

 private:
  YAML::Node node_;
};

}  // namespace pagesim::sim

#include "sim/config/sweep.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>

#include "sim/config/kind_rules.h"
#include "sim/config/yaml_document.h"
#include "sim/config/yaml_visitors.h"

namespace pagesim::sim {
namespace {

std::string as_text(const YAML::Node& v) {
  if (v.IsScalar()) return v.Scalar();
  YAML::Emitter e;
  e << YAML::Flow << v;
  return e.c_str();
}

// A copy of `n` made of new nodes in their own memory, without source marks. Attaching it
// to a tree merges only this small memory into the tree's.
YAML::Node fresh_copy(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Scalar:
      return YAML::Node(n.Scalar());
    case YAML::NodeType::Sequence: {
      YAML::Node s(YAML::NodeType::Sequence);
      for (const auto& e : n) s.push_back(fresh_copy(e));
      return s;
    }
    case YAML::NodeType::Map: {
      YAML::Node m(YAML::NodeType::Map);
      for (const auto& kv : n) m[fresh_copy(kv.first)] = fresh_copy(kv.second);
      return m;
    }
    case YAML::NodeType::Null:
      return YAML::Node(YAML::NodeType::Null);
    default:
      return YAML::Node();
  }
}

// The lines of `n` and of every part of it, by path below it.
void collect_lines(const YAML::Node& n, const std::string& below, std::vector<std::pair<std::string, int>>& out) {
  out.emplace_back(below, YamlReader::line_of(n));
  if (n.IsMap())
    for (const auto& kv : n) collect_lines(kv.second, below + "." + as_text(kv.first), out);
  else if (n.IsSequence())
    for (std::size_t i = 0; i < n.size(); ++i) collect_lines(n[i], below + "[" + std::to_string(i) + "]", out);
}

// Two scalars that spell one number ("1" and "1.0", "4096" and "0x1000", "1e3" and "1000"):
// the key reads them as one value, so an axis holding both would run one point twice.
bool same_number(const std::string& a, const std::string& b) {
  const auto number = [](const std::string& t, long double* out) {
    if (t.empty() || std::isspace(static_cast<unsigned char>(t.front()))) return false;
    char* end = nullptr;
    errno = 0;
    *out = std::strtold(t.c_str(), &end);
    return errno == 0 && end == t.c_str() + t.size() && std::isfinite(*out);
  };
  long double x = 0, y = 0;
  return number(a, &x) && number(b, &y) && x == y;
}

// The message of `e` without its "file:line: key: " prefix.
std::string message_of(const ConfigError& e) {
  const std::string what = e.what();
  const std::string prefix = ConfigError(e.file(), e.line(), e.key(), "").what();
  return what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what;
}

// `text` with the lines of the top-level `sweep` entry of `root` (read from `text`) made
// empty, so that re-reading it gives every other key at its own line. Empty when the file
// is not laid out as a block map with `sweep:` starting a line (then the caller falls back).
std::string without_sweep_lines(const std::string& text, const YAML::Node& root) {
  if (!root.IsMap() || root.Style() == YAML::EmitterStyle::Flow) return {};
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  auto starts_line = [&](const YAML::Mark& m) {
    if (m.is_null() || m.line < 0 || static_cast<std::size_t>(m.line) >= lines.size()) return false;
    const std::string& l = lines[static_cast<std::size_t>(m.line)];
    return static_cast<std::size_t>(m.column) <= l.size() &&
           l.find_first_not_of(" \t") == static_cast<std::size_t>(m.column);
  };
  int first = -1, end = static_cast<int>(lines.size());
  for (auto it = root.begin(); it != root.end(); ++it) {
    if (first >= 0) {
      if (!starts_line(it->first.Mark())) return {};
      end = it->first.Mark().line;
      break;
    }
    if (it->first.IsScalar() && it->first.Scalar() == "sweep") {
      if (!starts_line(it->first.Mark())) return {};
      first = it->first.Mark().line;
    }
  }
  if (first < 0) return text;
  std::string out;
  for (int i = 0; i < static_cast<int>(lines.size()); ++i) {
    if (i < first || i >= end) out += lines[static_cast<std::size_t>(i)];
    out += '\n';
  }
  return out;
}

// The top-level keys of `root` other than `sweep`, in order.
std::vector<std::string> keys_besides_sweep(const YAML::Node& root) {
  std::vector<std::string> keys;
  if (root.IsMap())
    for (const auto& kv : root)
      if (as_text(kv.first) != "sweep") keys.push_back(as_text(kv.first));
  return keys;
}

}  // namespace

Sweep Sweep::from_file(const std::string& file, const std::vector<std::string>& overrides) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ConfigError(file, 0, "", "cannot open the file");
  std::ostringstream text;
  text << in.rdbuf();
  return from_text(text.str(), file, overrides);
}

Sweep Sweep::from_text(const std::string& text, const std::string& file, const std::vector<std::string>& overrides) {
  Sweep s;
  s.file_ = file;
  YAML::Node root = load_yaml_document(text, file);
  // Where the file's own keys are, before --set changes the tree.
  const std::string base_text = without_sweep_lines(text, root);
  const std::vector<std::string> file_keys = keys_besides_sweep(root);

  // --set: sweep.* replaces parts of the sweep section; the rest is applied to the tree and,
  // for each point, again to the re-read file.
  std::vector<KeyAssignment> sets;
  for (const auto& o : overrides) {
    const auto eq = o.find('=');
    const std::string path = eq == std::string::npos ? o : o.substr(0, eq);
    if (eq == std::string::npos || !(path == "sweep" || path.rfind("sweep.", 0) == 0)) {
      sets.push_back(apply_override(root, o));
      s.overrides_.push_back(o);
      continue;
    }
    YAML::Node value;
    try {
      value = fresh_copy(YAML::Load(o.substr(eq + 1)));
    } catch (const YAML::Exception& e) {
      throw ConfigError("--set", 0, path, "value is not valid YAML: " + describe_yaml_error(e));
    }
    if (path == "sweep") {
      root["sweep"] = value;
      continue;
    }
    const std::string key = path.substr(6);
    if (key.empty()) throw ConfigError("--set", 0, path, "empty key in the path (expected sweep.key.path=[values])");
    const YAML::Node& read = root;
    if (!read.IsMap()) throw ConfigError("--set", 0, path, "cannot set a key: the experiment is not a map of settings");
    if (!read["sweep"] || read["sweep"].IsNull()) root["sweep"] = YAML::Node(YAML::NodeType::Map);
    if (!read["sweep"].IsMap())
      throw ConfigError("--set", 0, path, "the experiment's sweep section is not a map of key paths to lists");
    root["sweep"][key] = value;  // an existing axis keeps its place among the axes
  }

  drop_other_kinds_keys(root, sets, kServingKinds);
  const YAML::Node& read = root;  // lookups that add no key
  if (!read.IsMap() || !read["sweep"]) {
    s.fallback_root_ = root;  // one run: the tree itself, whatever it holds
    return s;
  }
  s.fallback_root_ = fork_root(root);
  s.fallback_root_.remove("sweep");
  s.swept_ = true;
  if (!base_text.empty()) {
    try {
      s.use_text_ = keys_besides_sweep(YAML::Load(base_text)) == file_keys;
    } catch (const YAML::Exception&) {
      s.use_text_ = false;  // e.g. an alias of an anchor the sweep's lines defined
    }
    if (s.use_text_) s.base_text_ = base_text;
  }

  const YAML::Node sweep = read["sweep"];
  if (!sweep.IsMap())
    throw ConfigError(file, YamlReader::line_of(sweep), "sweep", "expected a map of key paths to lists, and/or cases");
  auto value_of = [](const YAML::Node& v) {
    Value out{fresh_copy(v), as_text(v), {}};
    collect_lines(v, "", out.lines);
    return out;
  };
  for (const auto& kv : sweep) {
    const std::string key = kv.first.Scalar();
    const YAML::Node val = kv.second;
    if (key == "cases") {
      if (!val.IsSequence() || val.size() == 0)
        throw ConfigError(file, YamlReader::line_of(val), "sweep.cases", "expected a non-empty list of maps");
      for (std::size_t i = 0; i < val.size(); ++i) {
        const YAML::Node c = val[i];
        const std::string where = "sweep.cases[" + std::to_string(i) + "]";
        if (!c.IsMap()) throw ConfigError(file, YamlReader::line_of(c), where, "expected a map of key.path: value");
        Case k;
        for (const auto& e : c) {
          if (e.first.Scalar() == "label") k.label = e.second.Scalar();
          else k.sets.push_back(Assignment{e.first.Scalar(), value_of(e.second)});
        }
        if (k.label.empty()) k.label = "case" + std::to_string(i);
        for (std::size_t j = 0; j < s.cases_.size(); ++j)
          if (s.cases_[j].label == k.label)
            throw ConfigError(file, YamlReader::line_of(c["label"] ? c["label"] : c), where + ".label",
                              "label '" + k.label + "' is already used by sweep.cases[" + std::to_string(j) +
                                  "] (labels name the points and must be unique)");
        s.cases_.push_back(std::move(k));
      }
    } else {
      if (!val.IsSequence() || val.size() == 0)
        throw ConfigError(file, YamlReader::line_of(val), "sweep." + key, "expected a non-empty list of values");
      Axis axis{key, {}};
      for (const auto& v : val) axis.values.push_back(value_of(v));
      s.axes_.push_back(std::move(axis));
    }
  }
  // Points must be what their labels say: no axis repeats a value (two points, one label),
  // no two axes set one key, and no axis overrides a case's whole assignment at every point.
  // (A case may give a map whose one entry an axis varies: the case supplies the rest.)
  auto line_of_value = [](const Value& v) { return v.lines.empty() ? 0 : v.lines.front().second; };
  for (const Axis& a : s.axes_)
    for (std::size_t j = 1; j < a.values.size(); ++j)
      for (std::size_t i = 0; i < j; ++i)
        if (a.values[i].text == a.values[j].text)
          throw ConfigError(file, line_of_value(a.values[j]), "sweep." + a.key,
                            fmt::format("found {} twice (values {} and {}), expected distinct values: equal values "
                                        "make identical points with one label",
                                        a.values[j].text, i, j));
        else if (same_number(a.values[i].text, a.values[j].text))
          throw ConfigError(file, line_of_value(a.values[j]), "sweep." + a.key,
                            fmt::format("found {} and {} (values {} and {}), one number spelled twice, expected "
                                        "distinct values: they make identical points with two labels",
                                        a.values[i].text, a.values[j].text, i, j));
  for (std::size_t i = 0; i < s.axes_.size(); ++i)
    for (std::size_t j = i + 1; j < s.axes_.size(); ++j)
      if (covers(s.axes_[i].key, s.axes_[j].key) || covers(s.axes_[j].key, s.axes_[i].key))
        throw ConfigError(file, line_of_value(s.axes_[j].values.front()), "sweep." + s.axes_[j].key,
                          fmt::format("the axis sweep.{} also sets '{}': two axes would set one key; keep one",
                                      s.axes_[i].key, s.axes_[j].key));
  for (std::size_t i = 0; i < s.cases_.size(); ++i)
    for (const Assignment& c : s.cases_[i].sets)
      for (const Axis& a : s.axes_)
        if (covers(a.key, c.key))
          throw ConfigError(file, line_of_value(c.value), fmt::format("sweep.cases[{}].{}", i, c.key),
                            fmt::format("the axis sweep.{} also sets '{}' and would override this case at every "
                                        "point: move the value into the axis, or the axis into the cases",
                                        a.key, c.key));
  if (s.cases_.empty()) s.cases_.push_back(Case{});
  for (const Axis& a : s.axes_) {
    if (s.grid_size_ > std::numeric_limits<std::size_t>::max() / s.cases_.size() / a.values.size())
      throw ConfigError(file, YamlReader::line_of(sweep), "sweep", "too many points (the grid overflows a count)");
    s.grid_size_ *= a.values.size();
  }
  s.size_ = s.cases_.size() * s.grid_size_;

  // A --set of a key the sweep varies would be overridden at every point (or override the
  // sweep): refuse it, naming both.
  for (const auto& o : s.overrides_) {
    const std::string path = o.substr(0, o.find('='));
    auto conflict = [&](const std::string& swept, const std::string& where, int line) {
      if (!covers(path, swept) && !covers(swept, path)) return;
      throw ConfigError("--set", 0, path,
                        fmt::format("the sweep also varies '{}' ({}{}: {}); drop this --set, or replace the axis with "
                                    "--set sweep.{}=[...]",
                                    swept, file, line > 0 ? ":" + std::to_string(line) : std::string(), where, swept));
    };
    for (std::size_t i = 0; i < s.cases_.size(); ++i)
      for (const Assignment& a : s.cases_[i].sets)
        conflict(a.key, "sweep.cases[" + std::to_string(i) + "]", a.value.lines.front().second);
    for (const Axis& a : s.axes_) conflict(a.key, "sweep." + a.key, a.values.front().lines.front().second);
  }
  return s;
}

std::vector<Sweep::Applied> Sweep::applied(std::size_t index) const {
  std::vector<Applied> out;
  if (!swept_) return out;
  const Case& c = cases_[index / grid_size_];
  for (const Assignment& a : c.sets) out.push_back(Applied{&a.key, &a.value, " (sweep.cases)"});
  std::size_t g = index % grid_size_;
  std::vector<const Value*> values(axes_.size());
  for (std::size_t a = axes_.size(); a-- > 0;) {
    values[a] = &axes_[a].values[g % axes_[a].values.size()];
    g /= axes_[a].values.size();
  }
  for (std::size_t a = 0; a < axes_.size(); ++a) out.push_back(Applied{&axes_[a].key, values[a], " (sweep)"});
  return out;
}

std::optional<std::string> value_text_at(const YAML::Node& root, const std::string& key) {
  YAML::Node node;
  node.reset(root);
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = key.find('.', start);
    if (!node.IsMap()) return std::nullopt;
    const YAML::Node& cnode = node;  // const lookup: never adds the key
    const YAML::Node next = cnode[key.substr(start, dot == std::string::npos ? std::string::npos : dot - start)];
    if (!next) return std::nullopt;
    if (dot == std::string::npos) return as_text(next);
    node.reset(next);
    start = dot + 1;
  }
}

std::string Sweep::label(std::size_t index) const {
  if (!swept_) return {};
  std::string label = cases_[index / grid_size_].label;
  const std::vector<Applied> all = applied(index);
  for (std::size_t a = 0; a < axes_.size(); ++a) {
    const Applied& x = all[all.size() - axes_.size() + a];
    label += (label.empty() ? "" : ",") + *x.key + "=" + x.value->text;
  }
  return label.empty() ? "point" : label;
}

std::vector<std::pair<std::string, std::string>> Sweep::assignments(std::size_t index) const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Applied& a : applied(index)) out.emplace_back(*a.key, a.value->text);
  return out;
}

std::vector<std::string> Sweep::keys() const {
  std::vector<std::string> keys;
  auto add = [&](const std::string& k) {
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  };
  if (!swept_) return keys;
  for (const Case& c : cases_)
    for (const Assignment& a : c.sets) add(a.key);
  for (const Axis& a : axes_) add(a.key);
  return keys;
}

YAML::Node Sweep::materialise(const std::vector<Applied>& all) const {
  if (!swept_) return fallback_root_;
  YAML::Node root;
  // What --set and the point lay over the file, in order: a point of another pool kind keeps
  // none of the file's keys of its kind.
  std::vector<KeyAssignment> laid;
  if (use_text_) {
    root = YAML::Load(base_text_);
    for (const auto& o : overrides_) laid.push_back(apply_override(root, o));
  } else {
    root = fork_root(fallback_root_);  // --set already laid and its drops made (from_text)
  }
  if (!root || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  for (const Applied& a : all) {
    set_path(root, *a.key, fresh_copy(a.value->node), file_ + a.origin);
    laid.push_back({*a.key, a.value->node});
  }
  drop_other_kinds_keys(root, laid, kServingKinds);
  return root;
}

YAML::Node Sweep::root(std::size_t index) const { return materialise(applied(index)); }

int Sweep::line_of_swept(const std::vector<Applied>& all, const std::string& key) {
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    if (!covers(*it->key, key)) continue;
    const std::string below = key.substr(it->key->size());
    int line = 0;
    std::size_t best = 0;
    for (const auto& [path, l] : it->value->lines)
      if (covers(path, below) && (path.size() >= best)) best = path.size(), line = l;
    return line;
  }
  return 0;
}

ExperimentConfig Sweep::config(std::size_t index) const {
  const std::vector<Applied> all = applied(index);
  ExperimentConfig c;
  try {
    c = parse_experiment(materialise(all), file_);
  } catch (const ConfigError& e) {
    if (e.line() != 0 || e.file() != file_) throw;
    if (const auto set = override_of(e.key())) throw ConfigError("--set " + *set, 0, e.key(), message_of(e));
    const int line = line_of_swept(all, e.key());
    if (line == 0) throw;
    throw ConfigError(file_, line, e.key(), message_of(e));
  }
  // The swept values were copied without their marks: give their keys the file's lines,
  // except where a later assignment replaced them.
  for (std::size_t i = 0; i < all.size(); ++i) {
    bool replaced = false;
    for (std::size_t j = i + 1; j < all.size(); ++j) replaced |= covers(*all[j].key, *all[i].key);
    if (replaced) continue;
    for (const auto& [below, line] : all[i].value->lines) {
      const std::string path = *all[i].key + below;
      if (line > 0 && c.origin.has(path)) c.origin.record(path, line);
    }
  }
  return c;
}

std::optional<std::string> Sweep::override_of(const std::string& key) const {
  for (auto it = overrides_.rbegin(); it != overrides_.rend(); ++it)
    if (covers(it->substr(0, it->find('=')), key)) return *it;
  return std::nullopt;
}

ConfigError Sweep::in_point(std::size_t index, const ConfigError& error) const {
  std::string file = error.file();
  if (const auto set = override_of(error.key()); set && error.line() == 0 && file == file_) file = "--set " + *set;
  std::string values;
  for (const auto& [k, v] : assignments(index)) values += (values.empty() ? ": " : ", ") + k + "=" + v;
  if (!swept_) return ConfigError(file, error.line(), error.key(), message_of(error));
  return ConfigError(file, error.line(), error.key(),
                     fmt::format("{} (in sweep point {} '{}'{})", message_of(error), index, label(index), values));
}

}  // namespace pagesim::sim

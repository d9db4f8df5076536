// YamlReader / YamlWriter: the two visitors that walk an experiment config's field list.
//
// A config struct lists its fields once, in a template visit(V&, Struct&) that calls
// v.field(key, meaning, member), v.choice(key, meaning, member, names), v.parsed(key, meaning,
// member, parse, format), v.section(key, fn), v.list(key, meaning, vector, fn) and
// v.field_or_section(key, meaning, name, as_section, fn) (a name or a map) and
// v.kinds(key, meaning, variant, names, fn, refusal) (one settings struct per kind,
// kind_alternatives.h). `meaning` is the
// key's one-line description (KeySchemaBuilder puts it in docs/experiment-keys.md and the
// JSON Schema; the reader and writer ignore it). YamlReader fills the struct from a YAML
// map — rejecting unknown keys, wrong types and unknown names with a ConfigError that names
// the file, the line and the dotted key path — and records the line of every key it reads in
// a ConfigOrigin; YamlWriter emits every field back as YAML. Absent keys keep the defaults.
#pragma once

#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <exception>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "sim/config/config_error.h"
#include "sim/config/config_origin.h"
#include "sim/core/close_names.h"
#include "sim/config/enum_names.h"
#include "sim/config/kind_alternatives.h"

namespace pagesim::sim {

class YamlReader {
 public:
  // REQUIRES: node is a map or null (an absent section). `origin` names the file in errors
  // and receives the line of every key read; it must outlive the reader.
  YamlReader(const YAML::Node& node, std::string path, ConfigOrigin& origin)
      : node_(node), path_(std::move(path)), origin_(origin) {}

  template <class T>
  void field(const char* key, const char* /*meaning*/, T& value) {
    scalar(key, value);
  }

  // A field added after results were published: the writer leaves it out at its default,
  // so config.resolved.yaml of runs that do not use it stays as it was.
  template <class T>
  void field_omitted_at_default(const char* key, const char* meaning, T& value, const T&) {
    field(key, meaning, value);
  }

 private:
  // Reads the scalar at `key` into `value` (field() and the kinds made of a scalar).
  template <class T>
  void scalar(const char* key, T& value) {
    known_.insert(key);
    YAML::Node n = child(key);
    if (!n) return;
    origin_.record(join(key), line_of(n));
    if (!n.IsScalar()) fail(n, key, "expected " + expected_of<T>() + ", found a " + kind_of(n));
    // Scalars read as JSON Schema reads them (docs/experiment.schema.json, `pagesim schema`): a
    // quoted scalar is a string, never a number or a boolean; a number with no fractional part
    // (1.0, 2e4) is an integer.
    if constexpr (std::is_arithmetic_v<T>) {
      if (n.Tag() == "!")
        fail(n, key, "expected " + expected_of<T>() + ", found the quoted string '" + n.Scalar() +
                         "' (a quoted scalar is a string: remove the quotes)");
    }
    try {
      value = n.as<T>();
    } catch (const YAML::Exception&) {
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        if (const auto whole = whole_number<T>(n.Scalar())) {
          value = *whole;
          return;
        }
      }
      fail(n, key, "expected " + expected_of<T>() + ", found '" + n.Scalar() + "'");
    }
    // A control character (the '\r' a last line without '\n' keeps, a trailing tab) would be
    // written back raw into config.resolved.yaml, which then reads back as another string.
    if constexpr (std::is_same_v<T, std::string>) {
      for (const char ch : value)
        if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f)
          fail(n, key, fmt::format("expected a string of printable characters, found one holding the control "
                                   "character 0x{:02x}",
                                   static_cast<unsigned>(static_cast<unsigned char>(ch))));
    }
  }


 public:
  // An enum written by name, with the table of allowed names (enum_names.h).
  template <class E, std::size_t N>
  void choice(const char* key, const char* /*meaning*/, E& value, const EnumNameTable<E, N>& names) {
    std::string s;
    scalar(key, s);
    if (!child(key)) return;
    if (const auto v = find_enum(names, s)) value = *v;
    else fail(child(key), key, "expected one of " + enum_name_list(names) + ", found '" + s + "'" + suggestion(s, names));
  }

  // A value written as a string in its own syntax ("fixed:64"): `parse(text)` gives the
  // value or throws a std::exception whose message says what was wrong and what is allowed;
  // that message becomes a ConfigError at the key's line. (`format` is the writer's.)
  // A choice (or a parsed value) added after results were published: the writer leaves it out at its default, so
  // config.resolved.yaml of runs that do not use it stays as it was.
  template <class E, std::size_t N>
  void choice_omitted_at_default(const char* key, const char* meaning, E& value, const EnumNameTable<E, N>& names,
                                 E) {
    choice(key, meaning, value, names);
  }

  template <class T, class Parse, class Format>
  void parsed_omitted_at_default(const char* key, const char* meaning, T& value, Parse&& parse, Format&& format,
                                 const T&) {
    parsed(key, meaning, value, std::forward<Parse>(parse), std::forward<Format>(format));
  }

  template <class T, class Parse, class Format>
  void parsed(const char* key, const char* /*meaning*/, T& value, Parse&& parse, Format&&) {
    std::string s;
    scalar(key, s);
    if (!child(key)) return;
    try {
      value = parse(s);
    } catch (const std::exception& e) {
      fail(child(key), key, e.what());
    }
  }

  template <class F>
  void section(const char* key, F&& visit_fn) {
    known_.insert(key);
    YAML::Node n = child(key);
    if (n) origin_.record(join(key), line_of(n));
    if (n && !n.IsMap()) fail(n, key, "expected a map of settings, found a " + kind_of(n));
    YamlReader sub(n, join(key), origin_);
    visit_fn(sub);
    sub.done();
  }

  // A section added after results were published: the writer leaves it out while
  // `at_default` (its settings unused), so config.resolved.yaml of runs without it stays as
  // it was. The reader reads it as any section.
  template <class F>
  void section_omitted_at_default(const char* key, bool at_default, F&& visit_fn) {
    (void)at_default;
    section(key, std::forward<F>(visit_fn));
  }

  template <class T, class F>
  void list(const char* key, const char* /*meaning*/, std::vector<T>& values, F&& visit_elem) {
    known_.insert(key);
    YAML::Node n = child(key);
    if (!n) return;
    origin_.record(join(key), line_of(n));
    if (!n.IsSequence()) fail(n, key, "expected a list, found a " + kind_of(n));
    values.clear();
    for (std::size_t i = 0; i < n.size(); ++i) {
      std::string p = join(key) + "[" + std::to_string(i) + "]";
      origin_.record(p, line_of(n[i]));
      if (!n[i].IsMap()) throw ConfigError(origin_.file(), line_of(n[i]), p, "expected a map, found a " + kind_of(n[i]));
      YamlReader sub(n[i], p, origin_);
      T v{};
      visit_elem(sub, v);
      sub.done();
      values.push_back(std::move(v));
    }
  }

  // A key that is either a name (a scalar, read into `name`; as_section = false) or a map
  // of settings (visit_fn; as_section = true): `model: llama-3-8b` or `model: {layers: ...}`.
  // Absent, both keep their values.
  template <class F>
  void field_or_section(const char* key, const char* /*meaning*/, std::string& name, bool& as_section,
                        F&& visit_fn) {
    YAML::Node n = child(key);
    if (n && n.IsMap()) {
      as_section = true;
      section(key, std::forward<F>(visit_fn));
      return;
    }
    scalar(key, name);
    if (n) as_section = false;
  }

  // A section of one kind's settings: the choice `kind_key` picks the alternative `settings`
  // holds (kind_alternatives.h), and visit_kind(v, alternative, own) lists an alternative's
  // keys (own: it is the kind chosen). A key only other kinds list is accepted as
  // config.resolved.yaml writes it (at its default, and only where written); else ConfigError
  // on it with the message refusal(key, kind, owner), owner the first kind to list it.
  template <class E, std::size_t N, class... A, class F, class R>
  void kinds(const char* kind_key, const char* meaning, std::variant<A...>& settings,
             const EnumNameTable<E, N>& names, F&& visit_kind, R&& refusal);

  // Keys consumed elsewhere (e.g. "sweep" at the top level).
  void ignore(const char* key, const char* /*meaning*/) { known_.insert(key); }

  // Throws ConfigError for the first key no visit asked for, or given twice (YAML forbids
  // it; yaml-cpp would silently read the first).
  void done() const {
    if (!node_ || !node_.IsMap()) return;
    std::map<std::string, int> seen;  // key -> line
    for (const auto& kv : node_) {
      const std::string k = kv.first.Scalar();
      if (auto [it, fresh] = seen.emplace(k, line_of(kv.first)); !fresh)
        throw ConfigError(origin_.file(), line_of(kv.first), join(k.c_str()),
                          it->second > 0 ? "duplicate key (first at line " + std::to_string(it->second) + ")"
                                         : std::string("duplicate key"));
      if (known_.count(k)) continue;
      std::string allowed;
      for (const auto& a : known_) allowed += (allowed.empty() ? "" : ", ") + a;
      std::vector<std::string> paths;  // the close keys as dotted paths: "did you mean allocator.block_size?"
      for (const std::string_view a : close_names(k, known_)) paths.push_back(join(std::string(a).c_str()));
      const std::string mean = did_you_mean(join(k.c_str()), paths);
      throw ConfigError(origin_.file(), line_of(kv.first), join(k.c_str()),
                        "unknown key" + (mean.empty() ? "" : ": " + mean) + " (allowed here: " + allowed + ")");
    }
  }

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
    throw ConfigError(origin_.file(), line_of(n), join(key), msg);
  }
  // A decimal or exponent spelling of a whole number that T holds ("1.0", "2e4"), else nullopt.
  template <class T>
  static std::optional<T> whole_number(const std::string& text) {
    if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) return std::nullopt;
    char* end = nullptr;
    errno = 0;
    const long double v = std::strtold(text.c_str(), &end);
    if (errno != 0 || end != text.c_str() + text.size() || !std::isfinite(v) || v != std::floor(v) ||
        v < static_cast<long double>(std::numeric_limits<T>::min()) ||
        v > static_cast<long double>(std::numeric_limits<T>::max()))
      return std::nullopt;
    return static_cast<T>(v);
  }
  // "; did you mean x?" for a name not in `names`, "" when none is close.
  template <class E, std::size_t N>
  static std::string suggestion(const std::string& found, const EnumNameTable<E, N>& names) {
    std::vector<std::string_view> list;
    for (const auto& [v, name] : names) list.push_back(name);
    const std::string mean = did_you_mean(found, list);
    return mean.empty() ? mean : "; " + mean;
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
  ConfigOrigin& origin_;
  std::set<std::string> known_;
};

class YamlWriter {
 public:
  // every_field: write the fields and sections left out at their defaults too (the
  // effective value of every key; config.resolved.yaml leaves them out).
  explicit YamlWriter(YAML::Node node, bool every_field = false) : node_(node), every_field_(every_field) {}

  template <class T>
  void field(const char* key, const char* /*meaning*/, const T& value) {
    if constexpr (std::is_floating_point_v<T>) node_[key] = yaml_number(value);
    else node_[key] = value;
  }

  // A finite number in its shortest form that reads back to the same double (0.9, not
  // yaml-cpp's 0.90000000000000002); infinities and NaN as yaml-cpp writes them (.inf, .nan).
  static YAML::Node yaml_number(double value) {
    if (!std::isfinite(value)) return YAML::Node(value);
    return YAML::Node(fmt::format("{}", value));
  }

  template <class T>
  void field_omitted_at_default(const char* key, const char* meaning, const T& value, const T& fallback) {
    if (every_field_ || value != fallback) field(key, meaning, value);
  }

  template <class E, std::size_t N>
  void choice(const char* key, const char* /*meaning*/, const E& value, const EnumNameTable<E, N>& names) {
    node_[key] = std::string(enum_name(names, value));
  }

  template <class E, std::size_t N>
  void choice_omitted_at_default(const char* key, const char* meaning, const E& value,
                                 const EnumNameTable<E, N>& names, E fallback) {
    if (every_field_ || value != fallback) choice(key, meaning, value, names);
  }

  template <class T, class Parse, class Format>
  void parsed_omitted_at_default(const char* key, const char* meaning, const T& value, Parse&& parse,
                                 Format&& format, const T& fallback) {
    if (every_field_ || value != fallback)
      parsed(key, meaning, value, std::forward<Parse>(parse), std::forward<Format>(format));
  }

  template <class T, class Parse, class Format>
  void parsed(const char* key, const char* /*meaning*/, const T& value, Parse&&, Format&& format) {
    node_[key] = format(value);
  }

  template <class F>
  void section(const char* key, F&& visit_fn) {
    YAML::Node sub(YAML::NodeType::Map);
    YamlWriter w(sub, every_field_);
    visit_fn(w);
    node_[key] = sub;
  }

  template <class F>
  void section_omitted_at_default(const char* key, bool at_default, F&& visit_fn) {
    if (every_field_ || !at_default) section(key, std::forward<F>(visit_fn));
  }

  template <class T, class F>
  void list(const char* key, const char* /*meaning*/, std::vector<T>& values, F&& visit_elem) {
    YAML::Node seq(YAML::NodeType::Sequence);
    for (T& v : values) {
      YAML::Node item(YAML::NodeType::Map);
      YamlWriter w(item, every_field_);
      visit_elem(w, v);
      seq.push_back(item);
    }
    node_[key] = seq;
  }

  template <class F>
  void field_or_section(const char* key, const char* meaning, const std::string& name, bool as_section,
                        F&& visit_fn) {
    if (as_section) section(key, std::forward<F>(visit_fn));
    else field(key, meaning, name);
  }

  // The chosen kind's keys, with each key only other kinds list at its default where
  // config.resolved.yaml has always written it (in kind order: a key several kinds list
  // keeps its first place).
  template <class E, std::size_t N, class... A, class F, class R>
  void kinds(const char* kind_key, const char* meaning, std::variant<A...>& settings,
             const EnumNameTable<E, N>& names, F&& visit_kind, R&&) {
    choice(kind_key, meaning, kind_of_alternative(names, settings), names);
    for_each_alternative<std::variant<A...>>([&](auto i) {
      if (i == settings.index()) {
        visit_kind(*this, std::get<i>(settings), true);
        return;
      }
      YAML::Node other(YAML::NodeType::Map);
      YamlWriter w(other, every_field_);
      std::variant_alternative_t<i, std::variant<A...>> defaults{};
      visit_kind(w, defaults, false);
      const YAML::Node& here = node_;
      for (const auto& kv : other)
        if (!here[kv.first.Scalar()]) node_[kv.first.Scalar()] = kv.second;
    });
  }

  void ignore(const char*, const char*) {}

 private:
  YAML::Node node_;
  bool every_field_;
};

template <class E, std::size_t N, class... A, class F, class R>
void YamlReader::kinds(const char* kind_key, const char* meaning, std::variant<A...>& settings,
                       const EnumNameTable<E, N>& names, F&& visit_kind, R&& refusal) {
  E kind = kind_of_alternative(names, settings);
  choice(kind_key, meaning, kind, names);
  choose_alternative(names, kind, settings);
  std::visit([&](auto& own) { visit_kind(*this, own, true); }, settings);
  const std::set<std::string> own_keys = known_;
  for_each_alternative<std::variant<A...>>([&](auto i) {
    if (i == settings.index()) return;
    using Other = std::variant_alternative_t<i, std::variant<A...>>;
    auto written = [&](Other value, bool every_field) {
      YAML::Node n(YAML::NodeType::Map);
      YamlWriter w(n, every_field);
      visit_kind(w, value, false);
      return n;
    };
    Other given{};
    YamlReader r(node_, path_, origin_);
    visit_kind(r, given, false);
    const YAML::Node as_given = written(given, false);
    const YAML::Node at_default = written(Other{}, false);
    for (const auto& kv : written(Other{}, true)) {
      const std::string k = kv.first.Scalar();
      if (own_keys.count(k)) continue;
      known_.insert(k);
      if (!child(k.c_str())) continue;
      if (!at_default[k] || YAML::Dump(as_given[k]) != YAML::Dump(at_default[k]))
        throw origin_.error(join(k.c_str()), refusal(k, kind, names[i].first));
    }
  });
}

}  // namespace pagesim::sim

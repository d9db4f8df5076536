// KeySchemaBuilder: the third visitor of an experiment config's field list (beside YamlReader
// and YamlWriter, yaml_visitors.h). Walked over a default-constructed config it records every
// key the reader accepts — its type, its default as config.resolved.yaml writes it, the names
// a choice allows, its one-line meaning as the field list gives it — as a tree of KeyInfo. `pagesim schema` renders that tree as a JSON Schema
// and `pagesim keys` as the reference table of docs/experiment-keys.md (config_schema.h), so
// neither can drift from the reader.
// A plain value builder; one per walk.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sim/config/enum_names.h"
#include "sim/config/kind_alternatives.h"

namespace pagesim::sim {

struct KeyInfo {
  enum class Type {
    kBool,
    kInteger,
    kNonNegativeInteger,
    kNumber,
    kString,
    kChoice,            // one of `choices`
    kParsed,            // a string in the key's own syntax (e.g. "fixed:64")
    kSection,           // a map of `children`
    kList,              // a list of maps, each of `children`
    kStringOrSection,   // a string (a name) or a map of `children`
    kOther,             // read elsewhere (the sweep section, replicas.overrides)
  };
  std::string key;                   // name within its section
  Type type = Type::kOther;
  std::string default_text;          // the default as config.resolved.yaml writes it; "" for maps
  std::vector<std::string> choices;  // kChoice: the allowed names in table order
  std::vector<KeyInfo> children;     // kSection, kList (one element), kStringOrSection
  std::string meaning;               // one line: what the key sets ("" for a section)
};

class KeySchemaBuilder {
 public:
  template <class T>
  void field(const char* key, const char* meaning, T& value) {
    keys_.push_back(KeyInfo{key, type_of<T>(), text_of(value), {}, {}, meaning});
  }

  template <class T>
  void field_omitted_at_default(const char* key, const char* meaning, T& value, const T&) {
    field(key, meaning, value);
  }

  template <class E, std::size_t N>
  void choice(const char* key, const char* meaning, E& value, const EnumNameTable<E, N>& names) {
    KeyInfo k{key, KeyInfo::Type::kChoice, std::string(enum_name(names, value)), {}, {}, meaning};
    for (const auto& [v, name] : names) k.choices.emplace_back(name);
    keys_.push_back(std::move(k));
  }

  template <class E, std::size_t N>
  void choice_omitted_at_default(const char* key, const char* meaning, E& value, const EnumNameTable<E, N>& names,
                                 E) {
    choice(key, meaning, value, names);
  }

  template <class T, class Parse, class Format>
  void parsed(const char* key, const char* meaning, T& value, Parse&&, Format&& format) {
    keys_.push_back(KeyInfo{key, KeyInfo::Type::kParsed, format(value), {}, {}, meaning});
  }

  template <class T, class Parse, class Format>
  void parsed_omitted_at_default(const char* key, const char* meaning, T& value, Parse&& parse, Format&& format,
                                 const T&) {
    parsed(key, meaning, value, std::forward<Parse>(parse), std::forward<Format>(format));
  }

  template <class F>
  void section(const char* key, F&& visit_fn) {
    KeySchemaBuilder sub;
    visit_fn(sub);
    keys_.push_back(KeyInfo{key, KeyInfo::Type::kSection, "", {}, std::move(sub.keys_), ""});
  }

  template <class F>
  void section_omitted_at_default(const char* key, bool, F&& visit_fn) {
    section(key, std::forward<F>(visit_fn));
  }

  template <class T, class F>
  void list(const char* key, const char* meaning, std::vector<T>&, F&& visit_elem) {
    KeySchemaBuilder sub;
    T element{};
    visit_elem(sub, element);
    keys_.push_back(KeyInfo{key, KeyInfo::Type::kList, "[]", {}, std::move(sub.keys_), meaning});
  }

  // A key that is a name (a preset) or a map describing the thing itself (yaml_visitors.h).
  template <class F>
  void field_or_section(const char* key, const char* meaning, std::string& name, bool&, F&& visit_fn) {
    KeySchemaBuilder sub;
    visit_fn(sub);
    keys_.push_back(KeyInfo{key, KeyInfo::Type::kStringOrSection, name, {}, std::move(sub.keys_), meaning});
  }

  // One settings struct per kind (yaml_visitors.h): every kind's keys in kind order, a key
  // several kinds list once, where the first lists it; `settings`' kind gives its defaults.
  template <class E, std::size_t N, class... A, class F, class R>
  void kinds(const char* kind_key, const char* meaning, std::variant<A...>& settings,
             const EnumNameTable<E, N>& names, F&& visit_kind, R&&) {
    E kind = kind_of_alternative(names, settings);
    choice(kind_key, meaning, kind, names);
    for_each_alternative<std::variant<A...>>([&](auto i) {
      KeySchemaBuilder sub;
      std::variant_alternative_t<i, std::variant<A...>> defaults{};
      const bool own = i == settings.index();
      visit_kind(sub, own ? std::get<i>(settings) : defaults, own);
      for (KeyInfo& k : sub.keys_) {
        bool listed = false;
        for (const KeyInfo& have : keys_) listed = listed || have.key == k.key;
        if (!listed) keys_.push_back(std::move(k));
      }
    });
  }

  void ignore(const char* key, const char* meaning) {
    keys_.push_back(KeyInfo{key, KeyInfo::Type::kOther, "", {}, {}, meaning});
  }

  // The keys visited, in field-list order.
  std::vector<KeyInfo>& keys() { return keys_; }

 private:
  template <class T>
  static KeyInfo::Type type_of() {
    if constexpr (std::is_same_v<T, bool>) return KeyInfo::Type::kBool;
    else if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>) return KeyInfo::Type::kNonNegativeInteger;
    else if constexpr (std::is_integral_v<T>) return KeyInfo::Type::kInteger;
    else if constexpr (std::is_floating_point_v<T>) return KeyInfo::Type::kNumber;
    else return KeyInfo::Type::kString;
  }
  // The value as YamlWriter writes it (yaml-cpp's conversion: ".inf" for infinity).
  template <class T>
  static std::string text_of(const T& value) {
    return YAML::Node(value).Scalar();
  }

  std::vector<KeyInfo> keys_;
};

}  // namespace pagesim::sim

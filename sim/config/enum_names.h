// Reading enum name tables: the value called "lru", the name of kLru, "lru, fifo" for a
// message.
//
// A module whose enum is written by name keeps, next to the enum, one constexpr
//   std::array<std::pair<E, std::string_view>, N>
// listing every value once with its name ("lru", "poisson", "vllm"). The table is a
// standard-library type, so allocator/ and traces/ publish their names without including
// anything of ours; a module that needs a name for itself (an allocator's name(), a summary
// line) looks it up in its own to_string(E). These helpers read any such table for the
// config (YamlReader::choice, YamlWriter) and for whatever above sim/config parses names
// (the CLI's --format). Header-only, no state.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace pagesim::sim {

// The table type every name table has.
template <class E, std::size_t N>
using EnumNameTable = std::array<std::pair<E, std::string_view>, N>;

// The name of `value`; "?" when the table lacks it (a table that misses a value is a bug
// its module's tests catch).
template <class E, std::size_t N>
constexpr std::string_view enum_name(const EnumNameTable<E, N>& names, E value) {
  for (const auto& [v, name] : names)
    if (v == value) return name;
  return "?";
}

// The value called `text` (exact, case-sensitive match), or nullopt.
template <class E, std::size_t N>
constexpr std::optional<E> find_enum(const EnumNameTable<E, N>& names, std::string_view text) {
  for (const auto& [v, name] : names)
    if (name == text) return v;
  return std::nullopt;
}

// "a, b, c": the allowed names in table order, for messages.
template <class E, std::size_t N>
std::string enum_name_list(const EnumNameTable<E, N>& names) {
  std::string list;
  for (const auto& [v, name] : names) {
    if (!list.empty()) list += ", ";
    list += name;
  }
  return list;
}

}  // namespace pagesim::sim

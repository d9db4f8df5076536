// EnumName: the one way pagesim names enum values in configs, summaries and messages.
//
// A module that writes an enum by name declares, next to the enum, a constexpr
// std::array<EnumName<E>, N> listing every value once with its name ("lru", "poisson",
// "vllm"). Readers look names up with find_enum(), writers and messages use enum_name(), and
// errors list the allowed names with enum_name_list(), so the names of an enum live in one
// table. Header-only and dependency-free (the standard library only): allocator/ and
// traces/, which depend on no other pagesim module, include it as they include <array>.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace pagesim {

template <class E>
struct EnumName {
  E value;
  std::string_view name;
};

// The name of `value`; "?" when the table lacks it (a table that misses a value is a bug
// its module's tests catch).
template <class E, std::size_t N>
constexpr std::string_view enum_name(const std::array<EnumName<E>, N>& names, E value) {
  for (const auto& n : names)
    if (n.value == value) return n.name;
  return "?";
}

// The value called `text`, or nullopt.
template <class E, std::size_t N>
constexpr std::optional<E> find_enum(const std::array<EnumName<E>, N>& names, std::string_view text) {
  for (const auto& n : names)
    if (n.name == text) return n.value;
  return std::nullopt;
}

// "a, b, c": the allowed names, for messages.
template <class E, std::size_t N>
std::string enum_name_list(const std::array<EnumName<E>, N>& names) {
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + std::string(n.name);
  return list;
}

}  // namespace pagesim

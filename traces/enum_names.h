// Name tables for the enums of workload specs: the short names used in configs ("poisson",
// "lognormal", "mooncake") and their parsing, with an error that lists every allowed name.
// Header-only; the tables are constexpr arrays next to each enum.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "traces/trace_error.h"

namespace pagesim::traces {

template <class E>
struct EnumName {
  E value;
  std::string_view name;
};

// The value called `text`. Throws SpecError(field, "one of a, b, c", 'text') otherwise.
template <class E>
E parse_enum_name(std::span<const EnumName<E>> names, std::string_view text,
                  std::string_view field) {
  std::string list;
  for (const auto& n : names) {
    if (n.name == text) return n.value;
    list += (list.empty() ? "" : ", ") + std::string(n.name);
  }
  throw SpecError(std::string(field), "one of " + list, quote_found(text));
}

// The name of `value`. REQUIRES: value is in `names`.
template <class E>
std::string_view enum_name(std::span<const EnumName<E>> names, E value) {
  for (const auto& n : names) {
    if (n.value == value) return n.name;
  }
  return "?";
}

}  // namespace pagesim::traces

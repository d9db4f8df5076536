// Parsing of the enum names of workload specs ("poisson", "lognormal", "mooncake") for
// callers outside a config file (the CLI's --format, tests): a SpecError that lists every
// allowed name. The tables themselves sit next to each enum (common/enum_names.h).
// Header-only.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

#include "common/enum_names.h"
#include "traces/trace_error.h"

namespace pagesim::traces {

// The value called `text`. Throws SpecError(field, "one of a, b, c", 'text') otherwise.
template <class E, std::size_t N>
E parse_enum_name(const std::array<EnumName<E>, N>& names, std::string_view text, std::string_view field) {
  if (const auto value = find_enum(names, text)) return *value;
  throw SpecError(std::string(field), "one of " + enum_name_list(names), quote_found(text));
}

}  // namespace pagesim::traces

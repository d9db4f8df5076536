// Kind alternatives: a config section whose `kind` key picks one of several settings structs,
// held as a std::variant whose alternative i belongs to the kind names[i] of the kind's name
// table (enum_names.h). The section is those settings: each kind lists its own keys, and the
// visitors (yaml_visitors.h, key_schema.h) walk the alternatives in table order. Header-only,
// no state.
#pragma once

#include <cstddef>
#include <utility>
#include <variant>

#include "sim/config/enum_names.h"

namespace pagesim::sim {

// Calls f(std::integral_constant<std::size_t, i>) for each alternative index i of Variant, in
// order.
template <class Variant, class F>
void for_each_alternative(F&& f) {
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (f(std::integral_constant<std::size_t, I>{}), ...);
  }(std::make_index_sequence<std::variant_size_v<Variant>>{});
}

// The kind of `settings`: the table's i-th value for alternative i.
// REQUIRES: the table lists the alternatives' kinds in the variant's order.
template <class E, std::size_t N, class... A>
E kind_of_alternative(const EnumNameTable<E, N>& names, const std::variant<A...>& settings) {
  static_assert(N == sizeof...(A), "one name per alternative");
  return names[settings.index()].first;
}

// Makes `settings` hold `kind`'s alternative: kept when it already does, else at its defaults.
template <class E, std::size_t N, class... A>
void choose_alternative(const EnumNameTable<E, N>& names, E kind, std::variant<A...>& settings) {
  for_each_alternative<std::variant<A...>>([&](auto i) {
    if (names[i].first == kind && settings.index() != i) settings.template emplace<i>();
  });
}

}  // namespace pagesim::sim

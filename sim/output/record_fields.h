// Record fields: the one list of fields from which a record's CSV header, CSV row and JSON
// object are generated (STYLE rule 8), so the three cannot drift apart.
//
// A record is a plain aggregate R with a specialisation of RecordFields<R> next to it:
//   template <> struct RecordFields<R> {
//     static constexpr auto fields = std::tuple{Field{"a", &R::a}, Field{"b", &R::b}};
//   };
// (a std::array works too when every field has one type; any element with `name` and
// `member` will do). The list names the members in output order, each exactly once;
// `static_assert(lists_every_member<R>())` beside it stops a member added to R without a
// field. A field whose type is itself a record is nested: its columns stand in its place in
// CSV under their own names (no prefix), and it is a nested object in JSON. A field of type
// std::optional<record> is JSON only (a record holding one has no CSV form): a nested
// object when engaged, no key at all when empty, so outputs of runs without it keep their
// bytes.
//
// Header-only, stateless and safe from any thread. The CSV row is formatted into a
// caller-provided fmt::memory_buffer, so a row costs no heap allocation.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace pagesim::sim {

// One field of record R: its output name and its member.
template <class R, class T>
struct Field {
  std::string_view name;
  T R::*member;
};
// Spelled out for compilers without aggregate deduction (Clang before 17).
template <class R, class T>
Field(std::string_view, T R::*) -> Field<R, T>;

// Specialised for each record (see above); the primary template is left undefined.
template <class R>
struct RecordFields;

template <class R>
concept Record = requires { RecordFields<R>::fields; };

template <class T>
inline constexpr bool is_optional_record = false;
template <Record T>
inline constexpr bool is_optional_record<std::optional<T>> = true;

// Calls f(field) for each field of R, in order.
template <Record R, class F>
constexpr void for_each_field(F&& f) {
  std::apply([&](const auto&... field) { (f(field), ...); }, RecordFields<R>::fields);
}

namespace detail {

struct AnyValue {  // converts to any member type; only named in unevaluated contexts
  // Defined (never run) because std::optional's constexpr converting constructor, which a
  // std::optional<record> member brings in, instantiates the conversion to the record.
  template <class T>
  constexpr operator T() const {
    return T{};
  }
};

// The number of members of aggregate R: the longest brace initialiser it accepts.
template <class R, class... Values>
constexpr std::size_t aggregate_member_count() {
  if constexpr (requires { R{std::declval<Values>()..., AnyValue{}}; })
    return aggregate_member_count<R, Values..., AnyValue>();
  else
    return sizeof...(Values);
}

}  // namespace detail

// True when R's field list has as many entries as R has members (each member pointer is
// checked by the compiler, so together: every member is listed, if each only once).
template <Record R>
constexpr bool lists_every_member() {
  return std::tuple_size_v<std::remove_cvref_t<decltype(RecordFields<R>::fields)>> ==
         detail::aggregate_member_count<R>();
}

// Number of CSV columns of R (nested records count their own columns).
template <Record R>
constexpr std::size_t csv_column_count() {
  std::size_t n = 0;
  for_each_field<R>([&](const auto& field) {
    using T = std::remove_cvref_t<decltype(std::declval<const R&>().*field.member)>;
    static_assert(!is_optional_record<T>, "an optional record has no CSV form");
    if constexpr (Record<T>)
      n += csv_column_count<T>();
    else
      ++n;
  });
  return n;
}

// Appends R's column names, comma-separated (a leading comma unless `first`).
template <Record R>
void append_csv_header(std::string& out, bool first = true) {
  for_each_field<R>([&](const auto& field) {
    using T = std::remove_cvref_t<decltype(std::declval<const R&>().*field.member)>;
    static_assert(!is_optional_record<T>, "an optional record has no CSV form");
    if constexpr (Record<T>) {
      append_csv_header<T>(out, first);
    } else {
      if (!first) out += ',';
      out += field.name;
    }
    first = false;
  });
}

// R's CSV header line, without the newline.
template <Record R>
std::string csv_header() {
  std::string out;
  append_csv_header<R>(out);
  return out;
}

// Appends r's values, comma-separated, each formatted with fmt's "{}" (shortest round-trip
// form for doubles). No newline.
template <Record R>
void append_csv_row(fmt::memory_buffer& out, const R& r, bool first = true) {
  for_each_field<R>([&](const auto& field) {
    const auto& value = r.*field.member;
    using T = std::remove_cvref_t<decltype(value)>;
    static_assert(!is_optional_record<T>, "an optional record has no CSV form");
    if constexpr (Record<T>) {
      append_csv_row(out, value, first);
    } else {
      if (!first) out.push_back(',');
      fmt::format_to(std::back_inserter(out), "{}", value);
    }
    first = false;
  });
}

// r as a JSON object, keys in field order; nested records become nested objects, empty
// optional records are left out.
template <Record R>
nlohmann::ordered_json record_json(const R& r) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for_each_field<R>([&](const auto& field) {
    const auto& value = r.*field.member;
    using T = std::remove_cvref_t<decltype(value)>;
    if constexpr (is_optional_record<T>) {
      if (value) j[std::string(field.name)] = record_json(*value);
    } else if constexpr (Record<T>)
      j[std::string(field.name)] = record_json(value);
    else
      j[std::string(field.name)] = value;
  });
  return j;
}

// Reads back what record_json() wrote: each field from the key of its name (nested records
// from nested objects; an optional record is empty when its key is absent). Throws
// nlohmann::json::exception if a key is missing or holds another type. Doubles written by nlohmann's dump() read back to the same bits, so
// record_json(read_record_json<R>(record_json(r))) dumps to the same text.
template <Record R>
R read_record_json(const nlohmann::ordered_json& j) {
  R r{};
  for_each_field<R>([&](const auto& field) {
    auto& value = r.*field.member;
    using T = std::remove_cvref_t<decltype(value)>;
    if constexpr (is_optional_record<T>) {
      if (j.contains(std::string(field.name)))
        value = read_record_json<typename T::value_type>(j.at(std::string(field.name)));
    } else if constexpr (Record<T>) {
      value = read_record_json<T>(j.at(std::string(field.name)));
    } else {
      value = j.at(std::string(field.name)).template get<T>();
    }
  });
  return r;
}

}  // namespace pagesim::sim

#include "traces/field_parse.h"

#include <charconv>
#include <cmath>
#include <system_error>
#include <type_traits>

namespace pagesim::traces {
namespace {

template <class T>
Parsed<T> parse_with_from_chars(std::string_view text) {
  Parsed<T> out;
  if (text.empty()) {
    out.status = ParseStatus::kEmpty;
    return out;
  }
  const char* first = text.data();
  const char* last = text.data() + text.size();
  std::from_chars_result r{};
  if constexpr (std::is_floating_point_v<T>) {
    r = std::from_chars(first, last, out.value, std::chars_format::general);
  } else {
    r = std::from_chars(first, last, out.value, 10);
  }
  if (r.ec == std::errc::result_out_of_range && r.ptr == last) {
    out.status = ParseStatus::kOutOfRange;
  } else if (r.ec != std::errc{} || r.ptr != last) {
    out.status = ParseStatus::kInvalid;
  } else {
    out.status = ParseStatus::kOk;
  }
  return out;
}

}  // namespace

Parsed<std::int64_t> parse_int64(std::string_view text) {
  return parse_with_from_chars<std::int64_t>(text);
}

Parsed<std::uint64_t> parse_uint64(std::string_view text) {
  if (!text.empty() && text.front() == '-') return {0, ParseStatus::kInvalid};
  return parse_with_from_chars<std::uint64_t>(text);
}

Parsed<double> parse_double(std::string_view text) {
  Parsed<double> out = parse_with_from_chars<double>(text);
  if (out.ok() && !std::isfinite(out.value)) out.status = ParseStatus::kInvalid;
  return out;
}

std::string_view trim(std::string_view text) {
  // By hand: find_first_not_of(" \t") asks memchr about each character, and every field of
  // every trace row is trimmed.
  const auto blank = [](char c) { return c == ' ' || c == '\t'; };
  std::size_t begin = 0, end = text.size();
  while (begin < end && blank(text[begin])) ++begin;
  while (end > begin && blank(text[end - 1])) --end;
  return text.substr(begin, end - begin);
}

}  // namespace pagesim::traces

// Strict parsing of one numeric field with std::from_chars (locale-independent).
//
// The whole text must be one number: no sign other than a leading '-', no surrounding
// blanks (trim() first), no trailing characters. Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

namespace pagesim::traces {

enum class ParseStatus {
  kOk,
  kEmpty,       // the text is empty
  kInvalid,     // not a number of the requested kind, or trailing characters
  kOutOfRange,  // a number, but outside the type's range
};

template <class T>
struct Parsed {
  T value{};
  ParseStatus status = ParseStatus::kInvalid;
  bool ok() const { return status == ParseStatus::kOk; }
};

// Decimal integer in [INT64_MIN, INT64_MAX].
Parsed<std::int64_t> parse_int64(std::string_view text);
// Decimal integer in [0, UINT64_MAX]; a leading '-' is kInvalid.
Parsed<std::uint64_t> parse_uint64(std::string_view text);
// Finite decimal floating-point number ("1", "0.25", "1e-3"); "nan", "inf" are kInvalid,
// numbers beyond double's range are kOutOfRange.
Parsed<double> parse_double(std::string_view text);

// `text` without leading and trailing ASCII spaces and tabs.
std::string_view trim(std::string_view text);

}  // namespace pagesim::traces

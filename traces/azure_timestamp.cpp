#include "traces/azure_timestamp.h"

#include <fmt/format.h>

#include <charconv>
#include <chrono>

namespace pagesim::traces {
namespace {

constexpr std::string_view kForm =
    "a timestamp 'YYYY-MM-DD hh:mm:ss[.fraction][Z|+hh:mm|-hh:mm]'";

// Reads exactly `width` decimal digits at *pos into *value; advances *pos.
bool read_digits(std::string_view text, std::size_t* pos, std::size_t width, unsigned* value) {
  if (*pos + width > text.size()) return false;
  for (std::size_t i = *pos; i < *pos + width; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
  }
  const char* first = text.data() + *pos;
  const auto r = std::from_chars(first, first + width, *value, 10);
  if (r.ec != std::errc{}) return false;
  *pos += width;
  return true;
}

bool expect_char(std::string_view text, std::size_t* pos, std::string_view allowed) {
  if (*pos >= text.size() || allowed.find(text[*pos]) == std::string_view::npos) return false;
  ++*pos;
  return true;
}

}  // namespace

TimestampParse parse_timestamp(std::string_view text) {
  TimestampParse out;
  std::size_t pos = 0;
  unsigned year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  const bool shape_ok = read_digits(text, &pos, 4, &year) && expect_char(text, &pos, "-") &&
                        read_digits(text, &pos, 2, &month) && expect_char(text, &pos, "-") &&
                        read_digits(text, &pos, 2, &day) && expect_char(text, &pos, " T") &&
                        read_digits(text, &pos, 2, &hour) && expect_char(text, &pos, ":") &&
                        read_digits(text, &pos, 2, &minute) && expect_char(text, &pos, ":") &&
                        read_digits(text, &pos, 2, &second);
  if (!shape_ok) {
    out.error = std::string(kForm);
    return out;
  }
  // Fraction: 1 to 9 digits, scaled to nanoseconds.
  std::int64_t frac_ns = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    std::size_t digits = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      if (++digits > 9) {
        out.error = "a fraction of a second of at most 9 digits";
        return out;
      }
      frac_ns = frac_ns * 10 + (text[pos] - '0');
      ++pos;
    }
    if (digits == 0) {
      out.error = std::string(kForm);
      return out;
    }
    for (std::size_t i = digits; i < 9; ++i) frac_ns *= 10;
  }
  // UTC offset.
  std::int64_t offset_s = 0;
  if (pos < text.size() && text[pos] == 'Z') {
    ++pos;
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    const std::int64_t sign = text[pos] == '+' ? 1 : -1;
    ++pos;
    unsigned off_h = 0, off_m = 0;
    if (!read_digits(text, &pos, 2, &off_h) || !expect_char(text, &pos, ":") ||
        !read_digits(text, &pos, 2, &off_m)) {
      out.error = std::string(kForm);
      return out;
    }
    if (off_h > 23 || off_m > 59) {
      out.error = "a UTC offset between -23:59 and +23:59";
      return out;
    }
    offset_s = sign * static_cast<std::int64_t>(off_h * 3600 + off_m * 60);
  }
  if (pos != text.size()) {
    out.error = std::string(kForm);
    return out;
  }
  if (year < 1900 || year > 2200) {
    out.error = "a year between 1900 and 2200";
    return out;
  }
  const std::chrono::year_month_day date{std::chrono::year{static_cast<int>(year)},
                                         std::chrono::month{month}, std::chrono::day{day}};
  if (!date.ok()) {
    out.error = fmt::format("a valid calendar date (there is no {:04}-{:02}-{:02})", year, month, day);
    return out;
  }
  if (hour > 23 || minute > 59 || second > 59) {
    out.error = "a time of day between 00:00:00 and 23:59:59";
    return out;
  }
  const std::int64_t days = std::chrono::sys_days{date}.time_since_epoch().count();
  const std::int64_t seconds = days * 86400 + hour * 3600 + minute * 60 + second - offset_s;
  out.ns_since_epoch = seconds * 1'000'000'000 + frac_ns;
  return out;
}

double seconds_between(std::int64_t from_ns, std::int64_t to_ns) {
  // Exact in a double below 2^53 ns (104 days), so the division rounds once.
  return static_cast<double>(to_ns - from_ns) / 1e9;
}

}  // namespace pagesim::traces

// Exact, locale-independent parsing of the timestamps of the Azure LLM inference traces.
//
// Accepted form: "YYYY-MM-DD hh:mm:ss" ('T' may replace the space), optionally followed by a
// fraction of a second of 1 to 9 digits (".9799600" in the 2023 traces) and by a UTC offset
// "Z" or "+hh:mm"/"-hh:mm" ("+00:00" in the 2024 traces); no offset means UTC. Years
// 1900-2200, real calendar dates, hours 0-23, minutes and seconds 0-59 (no leap seconds).
// Result: integer nanoseconds since 1970-01-01 00:00:00 UTC, so differences are exact.
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace pagesim::traces {

struct TimestampParse {
  std::int64_t ns_since_epoch = 0;  // valid when error is empty
  std::string error;                // what was expected, when `text` is not a valid timestamp
  bool ok() const { return error.empty(); }
};

TimestampParse parse_timestamp(std::string_view text);

// Seconds from `from_ns` to `to_ns` (both from parse_timestamp): the exact difference,
// correctly rounded to a double when it is below 2^53 ns (104 days).
double seconds_between(std::int64_t from_ns, std::int64_t to_ns);

}  // namespace pagesim::traces

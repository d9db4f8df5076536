// The comma-separated fields of one line of a cost table (a profile, an operator table):
// split at every comma, each field trimmed of spaces, tabs and a CR (Windows line ends).
// No quoting: these tables hold names and numbers only. Pure functions; the returned views
// point into `line` and live as long as it does.
#pragma once

#include <string_view>
#include <vector>

namespace pagesim::sim::cost_csv {

inline std::string_view trim(std::string_view s) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

inline std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  for (;;) {
    const std::size_t comma = line.find(',');
    fields.push_back(trim(line.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    line.remove_prefix(comma + 1);
  }
  return fields;
}

}  // namespace pagesim::sim::cost_csv

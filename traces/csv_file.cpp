#include "traces/csv_file.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "traces/field_parse.h"
#include "traces/trace_error.h"

namespace pagesim::traces {
namespace {

std::string join_columns(const std::vector<std::string>& columns) {
  std::string out;
  for (const auto& c : columns) {
    if (!out.empty()) out += ", ";
    out += c.empty() ? std::string("(unnamed)") : c;
  }
  return out;
}

}  // namespace

std::string integer_expectation(std::int64_t min_value) {
  if (min_value == 0) return "a non-negative integer";
  if (min_value == 1) return "a positive integer";
  return fmt::format("an integer >= {}", min_value);
}

CsvFile::CsvFile(std::string file_path, std::string name) : lines_(std::move(file_path), std::move(name)) {
  std::string_view line;
  if (!lines_.next(&line)) {
    throw TraceError(lines_.path(), 0, "", "a header line", "an empty file");
  }
  header_line_ = lines_.line_number();
  split(line);
  columns_.assign(fields_.begin(), fields_.end());
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    if (columns_[i].empty()) continue;
    for (std::size_t j = 0; j < i; ++j) {
      if (columns_[j] == columns_[i]) {
        throw TraceError(path(), header_line_, "header", "distinct column names",
                         fmt::format("{} twice", quote_found(columns_[i])));
      }
    }
  }
}

void CsvFile::split(std::string_view line) {
  if (line.find('"') != std::string_view::npos) {
    throw TraceError(path(), lines_.line_number(), "",
                     "unquoted fields (quoted CSV fields are not supported)", quote_found(line));
  }
  fields_.clear();
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    fields_.push_back(trim(line.substr(start, comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
}

std::optional<std::size_t> CsvFile::find(std::string_view name) const {
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    if (columns_[i] == name) return i;
  }
  return std::nullopt;
}

std::size_t CsvFile::require(std::string_view name) const {
  if (auto i = find(name)) return *i;
  throw TraceError(path(), header_line_, "header", fmt::format("a column '{}'", name),
                   fmt::format("the columns {}", join_columns(columns_)));
}

void CsvFile::allow_only(std::span<const std::string_view> allowed) const {
  for (const auto& c : columns_) {
    if (std::find(allowed.begin(), allowed.end(), c) != allowed.end()) continue;
    std::string list;
    for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    throw TraceError(path(), header_line_, "header", fmt::format("only the columns {}", list),
                     fmt::format("unknown column {}", quote_found(c)));
  }
}

bool CsvFile::next_row() {
  std::string_view line;
  if (!lines_.next(&line)) return false;
  split(line);
  if (fields_.size() != columns_.size()) {
    throw TraceError(path(), line_number(), "",
                     fmt::format("{} fields as in the header", columns_.size()),
                     fmt::format("{} in {}", fields_.size(), quote_found(line)));
  }
  return true;
}

std::string CsvFile::column_subject(std::size_t column) const {
  return fmt::format("column '{}'", columns_[column]);
}

void CsvFile::fail(std::size_t column, std::string expected, std::string found) const {
  throw TraceError(path(), line_number(), column_subject(column), std::move(expected),
                   std::move(found));
}

std::int64_t CsvFile::integer(std::size_t column, std::int64_t min_value,
                              std::int64_t max_value) const {
  const std::string_view text = field(column);
  const Parsed<std::int64_t> p = parse_int64(text);
  const bool in_range = p.ok() && p.value >= min_value && p.value <= max_value;
  if (in_range) return p.value;
  std::string expected = integer_expectation(min_value);
  if (p.status == ParseStatus::kOutOfRange || (p.ok() && p.value > max_value)) {
    expected += fmt::format(" no larger than {}", max_value);
  }
  fail(column, std::move(expected), quote_found(text));
}

double CsvFile::non_negative_number(std::size_t column) const {
  const std::string_view text = field(column);
  const Parsed<double> p = parse_double(text);
  if (p.ok() && p.value >= 0.0) return p.value + 0.0;  // + 0.0 turns -0 into 0
  fail(column, "a finite non-negative number", quote_found(text));
}

double CsvFile::arrival_time(std::size_t column, double previous_s) const {
  const double t = non_negative_number(column);
  if (t < previous_s)
    fail(column,
         fmt::format("a time >= {} s, the previous row's (rows must be in arrival order)", previous_s),
         quote_found(field(column)));
  return t;
}

}  // namespace pagesim::traces

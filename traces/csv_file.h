// CsvFile: a streaming reader of a comma-separated text file whose first line is a header.
//
// Columns are identified by name, so readers accept them in any order. Fields are trimmed of
// spaces and tabs; quoted fields are not supported (every format read here is numeric) and a
// '"' anywhere is an error. Every row must have as many fields as the header. Line endings,
// byte-order mark and blank lines follow LineReader. The typed accessors throw TraceError
// naming file, line, column, what was expected and the text found. Holds one row in memory.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "traces/line_reader.h"

namespace pagesim::traces {

class CsvFile {
 public:
  // Opens `path` and reads its header. Throws TraceError if the file is missing or empty,
  // or the header repeats a non-empty column name. `name`: as LineReader's.
  explicit CsvFile(std::string path, std::string name = {});

  const std::vector<std::string>& columns() const { return columns_; }
  // Index of the column called `name`, if any.
  std::optional<std::size_t> find(std::string_view name) const;
  // Index of the column called `name`; throws TraceError (header line) if there is none.
  std::size_t require(std::string_view name) const;
  // Throws TraceError (header line) naming the first column not in `allowed`.
  void allow_only(std::span<const std::string_view> allowed) const;

  // Moves to the next data row. Returns false at the end of the file. Throws TraceError if
  // the row has a different number of fields than the header, or a quote.
  bool next_row();

  // The trimmed text of `column` in the current row. Valid until next_row().
  // REQUIRES: next_row() returned true; column < columns().size().
  std::string_view field(std::size_t column) const { return fields_[column]; }

  // The field as an integer in [min_value, max_value].
  std::int64_t integer(std::size_t column, std::int64_t min_value,
                       std::int64_t max_value = std::numeric_limits<std::int64_t>::max()) const;
  // The field as a finite number >= 0.
  double non_negative_number(std::size_t column) const;
  // The field as an arrival time in seconds: a finite number >= previous_s (rows must be
  // in arrival order).
  double arrival_time(std::size_t column, double previous_s) const;

  // Throws TraceError for the current row and `column`. `found` is rendered as given.
  [[noreturn]] void fail(std::size_t column, std::string expected, std::string found) const;

  std::int64_t line_number() const { return lines_.line_number(); }
  std::int64_t header_line() const { return header_line_; }
  const std::string& path() const { return lines_.path(); }

 private:
  void split(std::string_view line);  // into fields_
  std::string column_subject(std::size_t column) const;

  LineReader lines_;
  std::int64_t header_line_ = 0;
  std::vector<std::string> columns_;
  std::vector<std::string_view> fields_;  // views into the LineReader's current line
};

// "a non-negative integer", "a positive integer" or "an integer >= N".
std::string integer_expectation(std::int64_t min_value);

}  // namespace pagesim::traces

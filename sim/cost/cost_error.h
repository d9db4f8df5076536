// Error types of the cost-model layer.
//
// CostModelError: a bad setting reached a cost model or a preset lookup (unknown preset name,
// a non-positive size or bandwidth, a tensor-parallel degree that does not divide the heads,
// weights that do not fit in device memory). The message names the setting and what was
// expected.
//
// ProfileFormatError: a profile CSV (see profile_cost_model.h) or an operator table
// (operator_table.h) is unreadable or malformed.
// It carries the file, the 1-based line (0 when the problem concerns the whole file), the
// column name (empty when not about one column), what was found and what was expected, and
// formats them as "file:line: column 'c': found 'x', expected y".
//
// Both are thrown at construction time only; a constructed cost model never throws.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace pagesim::sim {

class CostModelError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class ProfileFormatError : public CostModelError {
 public:
  ProfileFormatError(std::string file, std::int64_t line, std::string column, std::string found,
                     std::string expected);

  const std::string& file() const { return file_; }
  std::int64_t line() const { return line_; }            // 1-based; 0: the whole file
  const std::string& column() const { return column_; }  // empty: not about one column
  const std::string& found() const { return found_; }
  const std::string& expected() const { return expected_; }

 private:
  std::string file_;
  std::int64_t line_;
  std::string column_;
  std::string found_;
  std::string expected_;
};

}  // namespace pagesim::sim

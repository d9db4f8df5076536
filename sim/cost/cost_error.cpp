#include "sim/cost/cost_error.h"

#include <utility>

#include <fmt/format.h>

namespace pagesim::sim {

namespace {

std::string format_profile_error(const std::string& file, std::int64_t line,
                                 const std::string& column, const std::string& found,
                                 const std::string& expected) {
  std::string where = line > 0 ? fmt::format("{}:{}", file, line) : file;
  std::string what_col = column.empty() ? std::string() : fmt::format(" column '{}':", column);
  return fmt::format("{}:{} found {}, expected {}", where, what_col, found, expected);
}

}  // namespace

ProfileFormatError::ProfileFormatError(std::string file, std::int64_t line, std::string column,
                                       std::string found, std::string expected)
    : CostModelError(format_profile_error(file, line, column, found, expected)),
      file_(std::move(file)),
      line_(line),
      column_(std::move(column)),
      found_(std::move(found)),
      expected_(std::move(expected)) {}

}  // namespace pagesim::sim

// Error types of the traces module.
//
// TraceError: a trace file could not be read as the format it was opened as. It names the
// file, the 1-based line (0 when the problem is the whole file: missing, empty), the subject
// (e.g. "column 'output_tokens'", "key 'hash_ids'", "header"; may be empty), what was
// expected and what was found. what() reads
//   traces/data/x.csv:17: column 'output_tokens': expected a non-negative integer, found '-3'
//
// SpecError: a workload spec (WorkloadSpec and its parts) or a name in a config is invalid.
// what() reads "<field>: expected <expected>, found <found>", e.g.
//   arrival.rate: expected a positive number of requests/s, found -1
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace pagesim::traces {

class TraceError : public std::runtime_error {
 public:
  // `found` is rendered as given: quote raw text with quote_found() first.
  TraceError(std::string file, std::int64_t line, std::string subject, std::string expected,
             std::string found);

  const std::string& file() const { return file_; }
  std::int64_t line() const { return line_; }  // 1-based; 0 = the whole file
  const std::string& subject() const { return subject_; }
  const std::string& expected() const { return expected_; }
  const std::string& found() const { return found_; }

 private:
  std::string file_;
  std::int64_t line_;
  std::string subject_;
  std::string expected_;
  std::string found_;
};

class SpecError : public std::invalid_argument {
 public:
  SpecError(std::string field, std::string expected, std::string found);

  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

// Raw text as it appears in an error message: in single quotes, control characters escaped,
// cut to at most 60 characters with "..." after.
std::string quote_found(std::string_view text);

}  // namespace pagesim::traces

#include "traces/trace_error.h"

#include <fmt/format.h>

#include <utility>

namespace pagesim::traces {
namespace {

std::string render_trace_error(const std::string& file, std::int64_t line,
                               const std::string& subject, const std::string& expected,
                               const std::string& found) {
  std::string out = file;
  if (line > 0) out += fmt::format(":{}", line);
  out += ": ";
  if (!subject.empty()) out += subject + ": ";
  out += "expected " + expected;
  if (!found.empty()) out += ", found " + found;
  return out;
}

}  // namespace

TraceError::TraceError(std::string file, std::int64_t line, std::string subject,
                       std::string expected, std::string found)
    : std::runtime_error(render_trace_error(file, line, subject, expected, found)),
      file_(std::move(file)),
      line_(line),
      subject_(std::move(subject)),
      expected_(std::move(expected)),
      found_(std::move(found)) {}

SpecError::SpecError(std::string field, std::string expected, std::string found)
    : std::invalid_argument(fmt::format("{}: expected {}, found {}", field, expected, found)),
      field_(std::move(field)) {}

std::string quote_found(std::string_view text) {
  constexpr std::size_t kMaxChars = 60;
  std::string out = "'";
  std::size_t shown = 0;
  for (char c : text) {
    if (shown == kMaxChars) {
      out += "...";
      break;
    }
    const auto u = static_cast<unsigned char>(c);
    if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (u < 0x20 || u == 0x7f) {
      out += fmt::format("\\x{:02x}", u);
    } else {
      out += c;
    }
    ++shown;
  }
  out += "'";
  return out;
}

}  // namespace pagesim::traces

#include "traces/line_reader.h"

#include <cerrno>
#include <filesystem>
#include <system_error>
#include <utility>

#include "traces/field_parse.h"
#include "traces/trace_error.h"

namespace pagesim::traces {

LineReader::LineReader(std::string path, std::string name) : path_(name.empty() ? path : std::move(name)) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::not_found) {
    throw TraceError(path_, 0, "", "an existing file", "no such file");
  }
  if (status.type() == std::filesystem::file_type::directory) {
    throw TraceError(path_, 0, "", "a file", "a directory");
  }
  errno = 0;
  in_.open(path, std::ios::in | std::ios::binary);
  if (!in_.is_open()) {
    const int err = errno;
    throw TraceError(path_, 0, "", "a readable file",
                     err != 0 ? std::generic_category().message(err) : "it cannot be opened");
  }
}

bool LineReader::read_raw_line() {
  // Bounded, unlike std::getline: a file without newlines (a binary file, /dev/zero) would
  // otherwise be read into memory until it ends, or forever.
  if (chunk_.empty()) chunk_.resize(kMaxLineBytes + 1);
  in_.getline(chunk_.data(), static_cast<std::streamsize>(chunk_.size()));
  const auto n = static_cast<std::size_t>(in_.gcount());
  if (in_.bad()) throw TraceError(path_, lines_read_ + 1, "", "readable text", "a read error");
  if (in_.fail()) {
    if (n == 0 && in_.eof()) return false;  // nothing left
    // getline sets failbit when it stored kMaxLineBytes characters and no newline follows.
    throw TraceError(path_, lines_read_ + 1, "",
                     "a line of at most " + std::to_string(kMaxLineBytes) + " bytes (a text trace file)",
                     "a longer line");
  }
  // n counts the newline when one ended the line (eof not reached).
  buf_.assign(chunk_.data(), in_.eof() ? n : n - 1);
  ++lines_read_;
  if (!buf_.empty() && buf_.back() == '\r') buf_.pop_back();
  if (lines_read_ == 1 && buf_.starts_with("\xEF\xBB\xBF")) buf_.erase(0, 3);
  return true;
}

bool LineReader::next(std::string_view* line) {
  if (!read_raw_line()) return false;
  if (!trim(buf_).empty()) {
    line_number_ = lines_read_;
    *line = buf_;
    return true;
  }
  // A blank line: fine if only blank lines follow it.
  const std::int64_t blank_line = lines_read_;
  while (read_raw_line()) {
    if (!trim(buf_).empty()) {
      throw TraceError(path_, blank_line, "",
                       "a data line (blank lines are allowed only at the end of the file)",
                       "a blank line");
    }
  }
  return false;
}

}  // namespace pagesim::traces

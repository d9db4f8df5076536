// LineReader: streams the lines of a text file, one at a time, with 1-based line numbers.
//
// Accepts LF and CRLF line endings and a missing final newline, and drops a UTF-8 byte-order
// mark at the start of the file. Blank lines (empty or only spaces/tabs) are allowed only at
// the end of the file, where they are skipped; a blank line followed by more text is an
// error naming the blank line. Holds one line in memory, never the whole file, so it also
// reads from pipes and FIFOs. Owns its stream; not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>

namespace pagesim::traces {

class LineReader {
 public:
  // Opens `path`. Throws TraceError (line 0) if it does not exist, is a directory, or cannot
  // be opened. `name`: how errors and path() name the file ("" = `path`), e.g. an
  // experiment's portable path of a file opened by its absolute one.
  explicit LineReader(std::string path, std::string name = {});

  // Reads the next non-blank line into *line, without its line ending. The view stays valid
  // until the next call. Returns false at the end of the file (trailing blank lines
  // skipped). Throws TraceError on a blank line followed by text, or on a read error.
  bool next(std::string_view* line);

  // The longest line accepted (bytes, without its line ending); a longer one is a TraceError
  // naming its line. Far above any trace row, low enough that a file without newlines
  // (binary, /dev/zero) fails at once instead of being read into memory.
  static constexpr std::size_t kMaxLineBytes = std::size_t{1} << 20;

  // 1-based number of the line last returned by next(); 0 before the first.
  std::int64_t line_number() const { return line_number_; }
  const std::string& path() const { return path_; }  // the name

 private:
  bool read_raw_line();  // into buf_, CR stripped; false at end of file

  std::string path_;
  std::ifstream in_;
  std::string buf_;
  std::string chunk_;  // getline's buffer, kMaxLineBytes + 1 (allocated at the first read)
  std::int64_t line_number_ = 0;   // of the line in buf_
  std::int64_t lines_read_ = 0;    // physical lines consumed so far
};

}  // namespace pagesim::traces

// NativeCsvWriter: writes requests in pagesim's native CSV format (native_csv_reader.h).
//
// Rows go to a temporary file beside the destination (same directory, name + ".tmp.<pid>.<k>")
// that commit() renames over the destination, so readers see either the old file or the
// complete new one, never a partial file (atomic rename; not fsynced, so not durable across
// a power loss). A writer destroyed without commit() removes its temporary file. Arrival
// times are written in the shortest form that reads back to the same double, so a file
// written and read again yields identical requests (ids excepted: the reader numbers rows
// from 0). Streams: memory use does not grow with the rows written. Not thread-safe.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

#include "traces/request_source.h"

namespace pagesim::traces {

// Which optional columns to write; arrival_s, prompt_tokens, output_tokens always are.
struct NativeCsvColumns {
  bool n = true;           // write the n column (else every request must have n == 1)
  bool beam_width = true;  // write beam_width (else every request must have beam_width == 1)
  bool hash_ids = false;   // write hash_ids (else every request must have none)
};

class NativeCsvWriter {
 public:
  // Creates the temporary file and writes the header. Throws TraceError if it cannot.
  explicit NativeCsvWriter(std::string path, NativeCsvColumns columns = {});
  ~NativeCsvWriter();
  NativeCsvWriter(const NativeCsvWriter&) = delete;
  NativeCsvWriter& operator=(const NativeCsvWriter&) = delete;

  // Appends one row. Throws TraceError (naming the destination and the row's line) if the
  // request is invalid (lengths outside [1 or 0, kMaxTokens], n or beam_width < 1, both > 1, arrival not finite,
  // negative or earlier than the previous row's), if it has a value the chosen columns cannot
  // hold, or on a write error. REQUIRES: commit() not called yet.
  void write(const TraceRequest& request);

  // Flushes, closes and renames the temporary file onto the destination. Throws TraceError on
  // failure (the temporary file is then removed). REQUIRES: not called before.
  void commit();

  std::uint64_t rows_written() const { return rows_; }
  const std::string& path() const { return path_; }

 private:
  [[noreturn]] void fail(std::string column, std::string expected, std::string found) const;

  std::string path_;
  std::string tmp_path_;
  NativeCsvColumns columns_;
  std::ofstream out_;
  std::string line_;  // reused row buffer
  std::uint64_t rows_ = 0;
  double last_arrival_s_ = 0.0;
  bool committed_ = false;
};

// Writes every request of `source` to `path` and commits. Returns the rows written.
// Throws TraceError (from the source or the writer); on error `path` is left untouched.
std::uint64_t write_native_csv(const std::string& path, RequestSource& source,
                               NativeCsvColumns columns = {});

}  // namespace pagesim::traces

#include "traces/native_csv_writer.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iterator>
#include <system_error>
#include <utility>

#include "traces/trace_error.h"

namespace pagesim::traces {

NativeCsvWriter::NativeCsvWriter(std::string path, NativeCsvColumns columns)
    : path_(std::move(path)), columns_(columns) {
  tmp_path_ = fmt::format("{}.tmp.{}.{:x}", path_, static_cast<long>(::getpid()),
                          reinterpret_cast<std::uintptr_t>(this));
  errno = 0;
  out_.open(tmp_path_, std::ios::out | std::ios::binary | std::ios::trunc);
  if (!out_.is_open()) {
    const int err = errno;
    throw TraceError(path_, 0, "", fmt::format("a writable temporary file '{}'", tmp_path_),
                     err != 0 ? std::generic_category().message(err) : "it cannot be created");
  }
  std::string header = "arrival_s,prompt_tokens,output_tokens";
  if (columns_.n) header += ",n";
  if (columns_.beam_width) header += ",beam_width";
  if (columns_.hash_ids) header += ",hash_ids";
  header += '\n';
  out_.write(header.data(), static_cast<std::streamsize>(header.size()));
}

NativeCsvWriter::~NativeCsvWriter() {
  if (committed_) return;
  out_.close();
  std::error_code ec;
  std::filesystem::remove(tmp_path_, ec);  // best effort; nothing to report from a destructor
}

void NativeCsvWriter::fail(std::string column, std::string expected, std::string found) const {
  // Line of the row being written: header is line 1, row k (0-based) is line k + 2.
  throw TraceError(path_, static_cast<std::int64_t>(rows_) + 2,
                   column.empty() ? std::string() : fmt::format("column '{}'", column),
                   std::move(expected), std::move(found));
}

void NativeCsvWriter::write(const TraceRequest& r) {
  assert(!committed_);
  if (!std::isfinite(r.arrival_s) || r.arrival_s < last_arrival_s_) {
    fail("arrival_s", fmt::format("a finite time >= {} s (the previous row's)", last_arrival_s_),
         fmt::format("{}", r.arrival_s));
  }
  if (r.prompt_tokens < 1 || r.prompt_tokens > kMaxTokens) {
    fail("prompt_tokens", fmt::format("a positive integer no larger than {}", kMaxTokens),
         fmt::format("{}", r.prompt_tokens));
  }
  if (r.output_tokens < 0 || r.output_tokens > kMaxTokens) {
    fail("output_tokens", fmt::format("a non-negative integer no larger than {}", kMaxTokens),
         fmt::format("{}", r.output_tokens));
  }
  if (r.n < 1 || (!columns_.n && r.n != 1)) {
    fail("n", columns_.n ? "a positive integer" : "1 (the file has no n column)",
         fmt::format("{}", r.n));
  }
  if (r.beam_width < 1 || (!columns_.beam_width && r.beam_width != 1)) {
    fail("beam_width",
         columns_.beam_width ? "a positive integer" : "1 (the file has no beam_width column)",
         fmt::format("{}", r.beam_width));
  }
  if (r.n > 1 && r.beam_width > 1) {  // a row NativeCsvReader would refuse
    throw TraceError(path_, static_cast<std::int64_t>(rows_) + 2, "columns 'n' and 'beam_width'",
                     "n = 1 or beam_width = 1 (a request is either parallel sampling (n) or beam search "
                     "(beam_width))",
                     fmt::format("n = {} and beam_width = {}", r.n, r.beam_width));
  }
  if (!columns_.hash_ids && !r.hash_ids.empty()) {
    fail("hash_ids", "no hash ids (the file has no hash_ids column)",
         fmt::format("{} ids", r.hash_ids.size()));
  }
  line_.clear();
  auto it = std::back_inserter(line_);
  fmt::format_to(it, "{},{},{}", r.arrival_s + 0.0, r.prompt_tokens, r.output_tokens);
  if (columns_.n) fmt::format_to(it, ",{}", r.n);
  if (columns_.beam_width) fmt::format_to(it, ",{}", r.beam_width);
  if (columns_.hash_ids) {
    line_ += ',';
    for (std::size_t i = 0; i < r.hash_ids.size(); ++i) {
      if (i > 0) line_ += ' ';
      fmt::format_to(it, "{}", r.hash_ids[i]);
    }
  }
  line_ += '\n';
  out_.write(line_.data(), static_cast<std::streamsize>(line_.size()));
  if (!out_) fail("", "a successful write", "a write error");
  last_arrival_s_ = r.arrival_s;
  ++rows_;
}

void NativeCsvWriter::commit() {
  assert(!committed_);
  out_.flush();
  const bool flushed = static_cast<bool>(out_);
  out_.close();
  if (!flushed || out_.fail()) {
    throw TraceError(path_, 0, "", "a successful write", "a write error");
  }
  std::error_code ec;
  std::filesystem::rename(tmp_path_, path_, ec);
  if (ec) {
    throw TraceError(path_, 0, "", fmt::format("a successful rename from '{}'", tmp_path_),
                     ec.message());
  }
  committed_ = true;
}

std::uint64_t write_native_csv(const std::string& path, RequestSource& source,
                               NativeCsvColumns columns) {
  NativeCsvWriter writer(path, columns);
  while (auto r = source.next()) writer.write(*r);
  writer.commit();
  return writer.rows_written();
}

}  // namespace pagesim::traces

#include "traces/benchmark_requests.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>
#include <utility>

#include "traces/trace_error.h"

namespace pagesim::traces {
namespace {

class BenchmarkReplaySource final : public RequestSource {
 public:
  explicit BenchmarkReplaySource(BenchmarkRequests b) : b_(std::move(b)), description_(traces::describe(b_)) {}

  std::optional<TraceRequest> next() override {
    if (next_ == b_.requests.size()) return std::nullopt;
    const MeasuredRequest& m = b_.requests[next_];
    TraceRequest r;
    r.id = next_++;
    r.arrival_s = m.arrival_s;
    r.prompt_tokens = m.prompt_tokens;
    r.output_tokens = m.output_tokens;
    return r;
  }
  std::string describe() const override { return description_; }

 private:
  BenchmarkRequests b_;
  std::string description_;
  std::size_t next_ = 0;
};

// The shortest text that reads back to `v`; empty for NaN (not measured).
void append_time(std::string& line, double v) {
  line += ',';
  if (!std::isnan(v)) fmt::format_to(std::back_inserter(line), "{}", v + 0.0);
}

}  // namespace

double to_nanoseconds(double seconds) {
  // NaN (not measured) stays NaN; a time past 2^53 ns (104 days) has no noise below a
  // nanosecond to remove and is kept as it is.
  if (!std::isfinite(seconds) || std::fabs(seconds) >= 9.0e6) return seconds;
  return std::round(seconds * 1e9) / 1e9 + 0.0;  // + 0.0: no -0
}

void sort_and_shift(std::vector<MeasuredRequest>& requests) {
  std::stable_sort(requests.begin(), requests.end(),
                   [](const MeasuredRequest& x, const MeasuredRequest& y) { return x.arrival_s < y.arrival_s; });
  if (requests.empty()) return;
  const double origin = requests.front().arrival_s;
  for (MeasuredRequest& m : requests) {
    m.arrival_s = to_nanoseconds(m.arrival_s - origin);
    m.ttft_s = to_nanoseconds(m.ttft_s);
    m.tpot_s = to_nanoseconds(m.tpot_s);
    m.e2e_s = to_nanoseconds(m.e2e_s);
  }
}

std::string describe(const BenchmarkRequests& b) {
  const std::uint64_t excluded = b.failed + b.without_output;
  std::string out = fmt::format("{} '{}': {} of {} requests", b.tool, b.path, b.requests.size(), b.total);
  if (excluded > 0)
    out += fmt::format(" ({} failed, {} without output tokens excluded)", b.failed, b.without_output);
  return out + ", arrivals " + b.arrivals;
}

std::unique_ptr<RequestSource> replay_source(BenchmarkRequests b) {
  if (b.requests.empty())
    throw TraceError(b.path, 0, "", "at least one successful request with output tokens",
                     fmt::format("none of {} ({} failed, {} without output tokens)", b.total, b.failed,
                                 b.without_output));
  return std::make_unique<BenchmarkReplaySource>(std::move(b));
}

void write_measured_requests_csv(const BenchmarkRequests& b, const std::string& path) {
  const std::string tmp = fmt::format("{}.tmp.{}", path, static_cast<long>(::getpid()));
  {
    errno = 0;
    std::ofstream out(tmp, std::ios::out | std::ios::binary | std::ios::trunc);
    if (!out.is_open()) {
      const int err = errno;
      throw TraceError(path, 0, "", fmt::format("a writable temporary file '{}'", tmp),
                       err != 0 ? std::generic_category().message(err) : "it cannot be created");
    }
    std::string line = "id,source_index,arrival_s,prompt_tokens,output_tokens,ttft_s,tpot_s,e2e_s\n";
    for (std::size_t i = 0; i < b.requests.size(); ++i) {
      const MeasuredRequest& m = b.requests[i];
      fmt::format_to(std::back_inserter(line), "{},{},{},{},{}", i, m.source_index, m.arrival_s + 0.0,
                     m.prompt_tokens, m.output_tokens);
      append_time(line, m.ttft_s);
      append_time(line, m.tpot_s);
      append_time(line, m.e2e_s);
      line += '\n';
    }
    out.write(line.data(), static_cast<std::streamsize>(line.size()));
    out.close();
    if (!out) {
      std::error_code ignored;
      std::filesystem::remove(tmp, ignored);
      throw TraceError(path, 0, "", "a successful write", "a write error");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw TraceError(path, 0, "", fmt::format("a successful rename from '{}'", tmp), ec.message());
  }
}

}  // namespace pagesim::traces

// BenchmarkRequests: the requests of a load test against a real server, as its client
// recorded them — what was sent (arrival, prompt and output lengths) and what the client
// measured (TTFT, TPOT, end-to-end latency) — read from a benchmark's result file by
// vllm_bench_reader.h or inference_perf_requests_reader.h. A replay of it is a trace
// (replay_source()); its measurements are the reference a simulation of that trace is
// compared with (write_measured_requests_csv(), python/pagesim/reports/sim_to_real/request_latencies.py).
//
// The latencies follow the definitions of pagesim's requests.csv (request_record.h), so the
// two files compare column by column: ttft_s from send to first token, e2e_s from send to
// last token, tpot_s = (e2e_s - ttft_s) / (output_tokens - 1) for more than one output
// token (vLLM's per-request TPOT, vllm/benchmarks/serve.py calculate_metrics). Plain values;
// the whole file is held in memory (the result files hold every request in one JSON value).
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "traces/request_source.h"

namespace pagesim::traces {

inline constexpr double kNotMeasured = std::numeric_limits<double>::quiet_NaN();

struct MeasuredRequest {
  std::uint64_t source_index = 0;  // 0-based position in the file's list of requests
  double arrival_s = 0;            // when the client sent it, seconds from the first send, >= 0
  std::int64_t prompt_tokens = 0;  // [1, kMaxTokens]
  std::int64_t output_tokens = 0;  // [1, kMaxTokens] (requests without output are excluded)
  double ttft_s = kNotMeasured;    // seconds; NaN: the file does not give it (not streamed)
  double tpot_s = kNotMeasured;    // seconds per token after the first; NaN: one token or not streamed
  double e2e_s = kNotMeasured;     // seconds
};

struct BenchmarkRequests {
  std::string path;      // the file read
  std::string tool;      // "vllm bench serve" or "inference-perf"
  std::string arrivals;  // how arrival_s was obtained, one phrase for logs
  // The successful requests with output, in arrival order (ties in file order).
  std::vector<MeasuredRequest> requests;
  std::uint64_t total = 0;           // requests in the file
  std::uint64_t failed = 0;          // excluded: the client recorded an error
  std::uint64_t without_output = 0;  // excluded: succeeded with 0 output tokens
};

// `seconds` rounded to the nanosecond (NaN and |seconds| >= 9e6 as they are): a difference
// of two clock readings (1000.2374 - 996.3626) carries float noise below that
// (3.8747999999999982), which the files would print; no client clock resolves it.
double to_nanoseconds(double seconds);

// Sorts `requests` by arrival_s (stable: ties keep their order), shifts the times so the
// first is 0 and rounds arrival_s, ttft_s, tpot_s and e2e_s to the nanosecond
// (to_nanoseconds), so trace.csv and measured_requests.csv print 3.8748, not
// 3.8747999999999982. Readers call it last.
void sort_and_shift(std::vector<MeasuredRequest>& requests);

// One line: "vllm bench serve 'f.json': 98 of 100 requests (1 failed, 1 without output
// excluded), arrivals from ...".
std::string describe(const BenchmarkRequests& b);

// A RequestSource replaying b.requests in order: ids 0, 1, ... (measured_requests.csv's id
// column), n = beam_width = 1, no hash ids (result files hold no token contents). Throws
// TraceError naming b.path when b holds no request.
std::unique_ptr<RequestSource> replay_source(BenchmarkRequests b);

// Writes b's requests to `path` as CSV, the columns
//   id,source_index,arrival_s,prompt_tokens,output_tokens,ttft_s,tpot_s,e2e_s
// (id as replay_source() numbers them; a value not measured is an empty field; times in the
// shortest form that reads back to the same double). Written to a temporary file renamed
// onto `path`, so a reader never sees a partial file. Throws TraceError if it cannot write.
void write_measured_requests_csv(const BenchmarkRequests& b, const std::string& path);

}  // namespace pagesim::traces

// read_vllm_bench(): the requests of a vLLM serving benchmark's result file — what
// `vllm bench serve` (vllm/benchmarks/serve.py) and the older benchmarks/benchmark_serving.py
// write with --save-result --save-detailed — as BenchmarkRequests (benchmark_requests.h).
//
// The file is one JSON object (json.dump of result_json; serve.py at vllm-project/vllm
// commit def9ce85, main_async() and benchmark()). Per request i, arrays of equal length:
//   input_lens[i]   prompt tokens (the server's usage.prompt_tokens when it sends them)
//   output_lens[i]  output tokens (usage.completion_tokens, else the tokenizer's count of the
//                   text; 0 for a failed request)
//   ttfts[i]        seconds from send to the first streamed chunk
//   itls[i]         list of seconds between successive chunks
//   errors[i]       "" for success, else the error text
//   start_times[i]  optional: the client's send time (time.perf_counter() seconds,
//                   RequestFuncOutput.start_time, lib/endpoint_request_func.py); some vLLM
//                   versions and forks save it, the commit above does not
// and at the top level request_rate (a number, or "inf"), burstiness (default 1),
// max_concurrency (null or an integer), ramp_up_strategy / ramp_up_start_rps /
// ramp_up_end_rps (optional). Other keys (generated_texts, means, percentiles, ...) are
// ignored. A file without input_lens was saved without --save-detailed and is refused.
//
// Measured latencies (endpoint_request_func.py: latency = last chunk - send, each itl the gap
// to the previous chunk): ttft_s = ttfts[i], e2e_s = ttfts[i] + sum(itls[i]), tpot_s as
// benchmark_requests.h. Requests with a non-empty error are counted as failed and left out;
// successful ones with output_lens 0 are counted and left out.
//
// Arrival times, in order of preference:
//   1. start_times, when present: start_times[i] - min(start_times).
//   2. Otherwise the file records no send time, only how they were drawn (get_request() in
//      serve.py): request_rate "inf" sends every request at 0; a finite rate draws gaps from
//      a gamma distribution (shape burstiness, scale 1 / (rate * burstiness); exponential
//      for burstiness 1) and, without ramp-up, scales their running sum so the last request
//      leaves at total / rate; ramp_up_strategy linear or exponential sets request i's rate
//      from ramp_up_start_rps to ramp_up_end_rps as serve.py does. vLLM draws from NumPy
//      seeded with --seed after its dataset sampling, which cannot be replayed here: pagesim
//      draws the same process from `seed` (seed.h), so a finite-rate replay has the right
//      rate and burstiness but not the measured run's exact send times.
//      With max_concurrency C, a request leaves only when fewer than C are in flight
//      (serve.py's semaphore, FIFO): the send times are rebuilt from the dispatch times above
//      and the measured end-to-end latencies — request i leaves at its dispatch time, or
//      when the earliest of the C requests in flight ends. Failed requests hold their slot
//      for their measured ttft + sum(itls) (0 when they failed before a token).
// Arrivals are then sorted (stable) and counted from the first send.
#pragma once

#include <cstdint>
#include <string>

#include "traces/benchmark_requests.h"

namespace pagesim::traces {

// Reads `path` whole. `seed` draws the arrival process when the file has no start_times and
// a finite request_rate. Throws TraceError naming the file and the key or element
// ("output_lens[7]") that is missing or malformed, what was expected and what was found.
BenchmarkRequests read_vllm_bench(const std::string& path, std::uint64_t seed);

}  // namespace pagesim::traces

// read_inference_perf_requests(): the requests of an inference-perf run as its per-request
// report records them — per_request_lifecycle_metrics.json, written when the config sets
// report.request_lifecycle.per_request: true — as BenchmarkRequests (benchmark_requests.h).
// (inference_perf_source.h is another thing: it generates what inference-perf would send.)
//
// The file is a JSON array, one object per request (kubernetes-sigs/inference-perf,
// inference_perf/reportgen/base.py; the same keys at commits fc877d3 (2026-02-12) and
// 7de5ef2 (2026-08-19)):
//   start_time   client send time, time.perf_counter() seconds
//                (client/modelserver/openai_client.py)
//   end_time     when the response ended, same clock
//   request      the request payload as a JSON string (max_tokens, ignore_eos)
//   info         what the client counted (apis/base.py InferenceInfo), in one of two layouts:
//                  fc877d3  {input_tokens, output_tokens, output_token_times: [...]}
//                  7de5ef2  {input_tokens, request_metrics, response_metrics:
//                            {output_tokens, output_token_times, server_usage}}
//                input/output_tokens are the client tokenizer's counts of the prompt and of
//                the streamed text; output_token_times the perf_counter() time of each streamed
//                message (empty or absent when not streamed); server_usage the server's usage
//                object (prompt_tokens, completion_tokens) when it sent one
//   error        null, or {error_type, error_msg} for a failed request
// Other keys are ignored. Requests with an error are counted as failed and left out, as are
// successful ones with no output token.
//
// Per request, lengths from the most exact source present:
//   prompt_tokens  server_usage.prompt_tokens, else info.input_tokens
//   output_tokens  server_usage.completion_tokens; else the payload's max_tokens (or
//                  max_completion_tokens) when it sets ignore_eos: true, since the server then
//                  generates exactly that many while the client's re-tokenization of the text
//                  can undercount (shared/sim2real README: min 0 where 247 were generated);
//                  else the client's output_tokens
// and times: arrival_s = start_time - min(start_time of the kept requests); e2e_s =
// end_time - start_time (inference-perf's request_latency); when streamed (more than one
// message time) ttft_s = first message time - start_time (its TTFT) and, for more than one
// output token, tpot_s = (last message time - first) / (output_tokens - 1): per token, as
// pagesim's requests.csv, where inference-perf's own TPOT divides by the messages (two per
// token in the sim2real runs; the last may be the closing [DONE]).
#pragma once

#include <string>

#include "traces/benchmark_requests.h"

namespace pagesim::traces {

// Reads `path` whole. Throws TraceError naming the file and the element and key
// ("[12].info.output_tokens") that is missing or malformed, what was expected and found.
BenchmarkRequests read_inference_perf_requests(const std::string& path);

}  // namespace pagesim::traces

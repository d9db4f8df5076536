// Trace file formats: their names, detection from a file's header, and open_trace(), which
// opens the right reader.
//
//   native    arrival_s,prompt_tokens,output_tokens[,n][,beam_width][,hash_ids]
//   vidur     arrived_at,num_prefill_tokens,num_decode_tokens[,...]
//   azure     TIMESTAMP,ContextTokens,GeneratedTokens
//   mooncake  JSON lines {"timestamp", "input_length", "output_length", "hash_ids"}
//   vllm-bench               a vLLM serving benchmark's result JSON, saved with
//                            --save-detailed (vllm_bench_reader.h)
//   inference-perf-requests  inference-perf's per_request_lifecycle_metrics.json
//                            (inference_perf_requests_reader.h)
//             These two are benchmark results read whole (benchmark_requests.h): the
//             successful requests replayed in arrival order, without hash ids.
//   lengths   lengths only (input_tokens,output_tokens / num_prefill_tokens,num_decode_tokens
//             / ...): no arrival times, so it cannot be opened by open_trace(); see
//             lengths_csv_source.h and cycle_shuffle_source.h.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "traces/benchmark_requests.h"
#include "traces/request_source.h"

namespace pagesim::traces {

enum class TraceFormat { kAuto, kNative, kVidur, kAzure, kMooncake, kLengths, kVllmBench, kInferencePerfRequests };

inline constexpr std::array<std::pair<TraceFormat, std::string_view>, 8> kTraceFormatNames = {{
    {TraceFormat::kAuto, "auto"},
    {TraceFormat::kNative, "native"},
    {TraceFormat::kVidur, "vidur"},
    {TraceFormat::kAzure, "azure"},
    {TraceFormat::kMooncake, "mooncake"},
    {TraceFormat::kLengths, "lengths"},
    {TraceFormat::kVllmBench, "vllm-bench"},
    {TraceFormat::kInferencePerfRequests, "inference-perf-requests"},
}};

// The format of `path`: from its first line when it starts with '[' (inference-perf-requests)
// or '{' (vllm-bench when the line holds the key "input_lens" or is a lone '{' opening an
// indented object, else mooncake); otherwise, from its CSV header: TIMESTAMP -> azure,
// arrival_s -> native, arrived_at -> vidur, a prompt- and an output-length column
// (lengths_csv_reader.h) -> lengths. Never returns kAuto. Reads the first line only (it
// opens the file twice: name the format explicitly for pipes). Throws TraceError (missing or
// empty file, unrecognised header) naming `name` ("" = `path`).
TraceFormat detect_format(const std::string& path, const std::string& name = {});

struct TraceFileOptions {
  TraceFormat format = TraceFormat::kAuto;  // kAuto: detect_format()
  // Tokens per hash id. 0: the format's default (mooncake 512; native: unknown, unchecked).
  std::int64_t hash_block_tokens = 0;
  std::string name;  // how errors and describe() name the file ("" = its path)
  // vllm-bench without recorded send times: the seed its arrival process is drawn from.
  std::uint64_t seed = 0;
};

// A reader for a timestamped trace file. Throws TraceError (unreadable file, a lengths-only
// file) and SpecError (hash_block_tokens < 0).
std::unique_ptr<RequestSource> open_trace(const std::string& path,
                                          const TraceFileOptions& options = {});

// The requests and measurements of a benchmark result file (format vllm-bench or
// inference-perf-requests, or kAuto detecting one of them). Throws TraceError (unreadable or
// malformed file, or one of another format).
BenchmarkRequests read_benchmark_requests(const std::string& path, const TraceFileOptions& options = {});

// "auto", "native", ...: the format's name in kTraceFormatNames.
std::string_view to_string(TraceFormat format);

}  // namespace pagesim::traces

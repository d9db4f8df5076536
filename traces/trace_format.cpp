#include "traces/trace_format.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "traces/azure_csv_reader.h"
#include "traces/csv_file.h"
#include "traces/field_parse.h"
#include "traces/inference_perf_requests_reader.h"
#include "traces/lengths_csv_reader.h"
#include "traces/line_reader.h"
#include "traces/mooncake_reader.h"
#include "traces/native_csv_reader.h"
#include "traces/trace_error.h"
#include "traces/vidur_csv_reader.h"
#include "traces/vllm_bench_reader.h"

namespace pagesim::traces {
namespace {

bool has_any(const CsvFile& csv, std::span<const std::string_view> names) {
  for (const auto n : names) {
    if (csv.find(n)) return true;
  }
  return false;
}

}  // namespace

TraceFormat detect_format(const std::string& path, const std::string& name) {
  {
    LineReader lines(path, name);
    std::string_view first;
    if (!lines.next(&first)) throw TraceError(lines.path(), 0, "", "a trace file", "an empty file");
    if (first.starts_with('[')) return TraceFormat::kInferencePerfRequests;
    if (first.starts_with('{')) {
      const std::string_view rest = trim(first.substr(1));
      if (rest.empty() || first.find("\"input_lens\"") != std::string_view::npos) return TraceFormat::kVllmBench;
      return TraceFormat::kMooncake;
    }
  }
  const CsvFile csv(path, name);
  if (csv.find("TIMESTAMP")) return TraceFormat::kAzure;
  if (csv.find("arrival_s")) return TraceFormat::kNative;
  if (csv.find("arrived_at")) return TraceFormat::kVidur;
  if (has_any(csv, kPromptLengthColumns) && has_any(csv, kOutputLengthColumns)) {
    return TraceFormat::kLengths;
  }
  std::string columns;
  for (const auto& c : csv.columns()) columns += (columns.empty() ? "" : ", ") + c;
  throw TraceError(csv.path(), csv.header_line(), "header",
                   "a known trace header (a column TIMESTAMP, arrival_s or arrived_at, or a "
                   "prompt- and an output-length column such as input_tokens,output_tokens), "
                   "or JSON lines",
                   fmt::format("the columns {}", columns));
}

std::unique_ptr<RequestSource> open_trace(const std::string& path,
                                          const TraceFileOptions& options) {
  if (options.hash_block_tokens < 0) {
    throw SpecError("trace.hash_block_tokens", "a number of tokens >= 0 (0 = format default)",
                    fmt::format("{}", options.hash_block_tokens));
  }
  const TraceFormat format =
      options.format == TraceFormat::kAuto ? detect_format(path, options.name) : options.format;
  switch (format) {
    case TraceFormat::kNative:
      return std::make_unique<NativeCsvReader>(path, NativeCsvOptions{options.hash_block_tokens}, options.name);
    case TraceFormat::kVidur:
      return std::make_unique<VidurCsvReader>(path, options.name);
    case TraceFormat::kAzure:
      return std::make_unique<AzureCsvReader>(path, options.name);
    case TraceFormat::kMooncake: {
      MooncakeOptions mo;
      if (options.hash_block_tokens > 0) mo.hash_block_tokens = options.hash_block_tokens;
      return std::make_unique<MooncakeReader>(path, mo, options.name);
    }
    case TraceFormat::kVllmBench:
    case TraceFormat::kInferencePerfRequests:
    {
      TraceFileOptions resolved = options;
      resolved.format = format;
      return replay_source(read_benchmark_requests(path, resolved));
    }
    case TraceFormat::kLengths:
      throw TraceError(options.name.empty() ? path : options.name, 0, "",
                       "a trace with arrival times (this lengths-only file needs a synthetic "
                       "workload: lengths from the file, arrivals from a process)",
                       "a lengths-only file");
    case TraceFormat::kAuto:
      break;
  }
  throw SpecError("trace.format", "a concrete format", "auto");
}

namespace {

// What the first line of a file that is not a benchmark result holds, for the error: a JSON
// object's fields (a mooncake trace has timestamp, input_length, output_length), else the format
// detected.
std::string found_instead(const std::string& path, TraceFormat format) {
  if (format != TraceFormat::kMooncake) return fmt::format("a {} trace", to_string(format));
  LineReader lines(path, "");
  std::string_view first;
  if (!lines.next(&first)) return "an empty file";
  const nlohmann::json j = nlohmann::json::parse(first, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return fmt::format("line 1 that is not a JSON object: {:.60}", first);
  if (j.empty()) return "line 1 an empty JSON object {}";
  std::string fields;
  for (const auto& [key, value] : j.items()) fields += (fields.empty() ? "\"" : ", \"") + key + "\"";
  const bool mooncake = j.contains("timestamp") && j.contains("input_length") && j.contains("output_length");
  return fmt::format("line 1 a JSON object with the fields {}{}", fields, mooncake ? " (a mooncake trace)" : "");
}

}  // namespace

BenchmarkRequests read_benchmark_requests(const std::string& path, const TraceFileOptions& options) {
  const TraceFormat format = options.format == TraceFormat::kAuto ? detect_format(path) : options.format;
  if (format == TraceFormat::kVllmBench) return read_vllm_bench(path, options.seed);
  if (format == TraceFormat::kInferencePerfRequests) return read_inference_perf_requests(path);
  throw TraceError(path, 0, "",
                   "a benchmark result with measured latencies (vllm-bench: vLLM's --save-detailed result JSON, one "
                   "object with input_lens, output_lens, ttfts, itls; or inference-perf-requests: inference-perf's "
                   "per_request_lifecycle_metrics.json, a list of requests)",
                   found_instead(path, format));
}

std::string_view to_string(TraceFormat format) {
  for (const auto& [value, name] : kTraceFormatNames)
    if (value == format) return name;
  return "?";
}

}  // namespace pagesim::traces

// WorkloadSpec: the plain settings struct a workload config (YAML) is parsed into, and the
// names its enum fields take in a config. make_source.h turns it into a RequestSource.
//
// Three kinds:
//   trace      replay a trace file (TraceFileSpec): its arrival times and lengths.
//   sessions   multi-turn sessions (session_source.h): sessions start at the ArrivalSpec
//              process's times, each turn's new input and output come from the LengthsSpec
//              (distributions or empirical), the rest from SessionsSpec; requests carry
//              hash ids, so the prefix cache sees what turns and sessions share.
//   synthetic  arrival times from an ArrivalSpec process and lengths from a LengthsSpec:
//                distributions  prompt and output drawn independently (length_distribution.h)
//                empirical      rows of a lengths file drawn at random, with replacement
//                file_order     rows of a lengths file in order, once (ends with the file)
//                cycle_shuffle  the vLLM artifact: rows cycled to the request count and
//                               shuffled (cycle_shuffle_source.h)
//   inference_perf  what the load generator inference-perf sends with its shared_prefix data
//              and constant or poisson load stages (inference_perf_source.h): prompts with
//              hash ids, and the stages' request ids for per-stage client metrics.
// Common to both: an optional n / beam_width mix, a total-length filter, a duration and a
// request cap, and the seed every random draw derives from (seed.h). Same spec and seed give
// an identical stream.
//
// The vLLM paper's Figure 2 workload, for example:
//   kind = kSynthetic; arrival = {kPoissonQuantum, rate 4.0, quantum_s 0.01};
//   lengths = {kCycleShuffle, path "traces/data/sharegpt_opt_lengths.csv"};
//   max_total_tokens = 2048; duration_s = 900; seed = 0.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "traces/arrival_process.h"
#include "traces/inference_perf_source.h"
#include "traces/length_distribution.h"
#include "traces/lengths_csv_reader.h"
#include "traces/sampling_choice.h"
#include "traces/seed.h"
#include "traces/session_source.h"
#include "traces/trace_format.h"

namespace pagesim::traces {

enum class WorkloadKind { kTrace, kSynthetic, kSessions, kInferencePerf };

// Requests a synthetic or sessions workload may generate (min(arrival.rate * duration_s,
// max_requests)): requests the GPU cannot serve yet wait in memory, so a rate far beyond it
// would grow the waiting queue without bound. As cycle_shuffle's kMaxCycledRequests.
inline constexpr std::uint64_t kMaxGeneratedRequests = 10'000'000;

inline constexpr std::array<std::pair<WorkloadKind, std::string_view>, 4> kWorkloadKindNames = {{
    {WorkloadKind::kTrace, "trace"},
    {WorkloadKind::kSynthetic, "synthetic"},
    {WorkloadKind::kSessions, "sessions"},
    {WorkloadKind::kInferencePerf, "inference_perf"},
}};

enum class LengthsKind { kDistributions, kEmpirical, kFileOrder, kCycleShuffle };

inline constexpr std::array<std::pair<LengthsKind, std::string_view>, 4> kLengthsKindNames = {{
    {LengthsKind::kDistributions, "distributions"},
    {LengthsKind::kEmpirical, "empirical"},
    {LengthsKind::kFileOrder, "file_order"},
    {LengthsKind::kCycleShuffle, "cycle_shuffle"},
}};

inline constexpr std::array<std::pair<WorkloadRng, std::string_view>, 2> kWorkloadRngNames = {{
    {WorkloadRng::kPagesim, "pagesim"},
    {WorkloadRng::kArtifact, "artifact"},
}};

// What a run does with a request that can never be scheduled (its prompt + output needs more
// than the KV pool, the scheduler's token budget or allocator.max_seq_len allow). Applied by
// the engine (EngineSettings), not by the request source.
enum class OversizePolicy {
  kError,     // stop the run with an error naming the limiting key (the default)
  kDrop,      // skip the request, counted in summary.json (requests_dropped_oversize)
  kTruncate,  // cut its prompt to the longest that fits (its first tokens, so prefix-cache
              // keys stay valid), keeping its output length; dropped if even a one-token
              // prompt does not fit. Counted (requests_truncated_oversize).
};

inline constexpr std::array<std::pair<OversizePolicy, std::string_view>, 3> kOversizePolicyNames = {{
    {OversizePolicy::kError, "error"},
    {OversizePolicy::kDrop, "drop"},
    {OversizePolicy::kTruncate, "truncate"},
}};

struct TraceFileSpec {
  std::string path;                         // the trace file to open
  std::string name;                         // how errors and describe() name it ("" = path);
                                            // not a config key (sim/config/input_path.h)
  TraceFormat format = TraceFormat::kAuto;  // kAuto: detect_format(); kLengths is refused
  // Tokens per hash id; 0 = the format's default (mooncake: 512; native: unknown, unchecked).
  std::int64_t hash_block_tokens = 0;
  // Arrival times are multiplied by this, > 0: 0.5 replays the trace at twice its rate.
  double time_scale = 1.0;
};

struct LengthsSpec {
  LengthsKind kind = LengthsKind::kDistributions;
  LengthSpec prompt;      // distributions: prompt length (must be >= 1 token)
  LengthSpec output;      // distributions: output length (tokens, >= 0)
  std::string path;       // empirical, file_order, cycle_shuffle: the lengths CSV file
  std::string name;       // how errors and describe() name it ("" = path); not a config key
  LengthColumns columns;  // ... and its two columns (empty names: detected from the header)
};

struct WorkloadSpec {
  WorkloadKind kind = WorkloadKind::kSynthetic;
  TraceFileSpec trace;    // kind == kTrace
  ArrivalSpec arrival;    // kind == kSynthetic: request arrivals; kSessions: session starts
  LengthsSpec lengths;    // kind == kSynthetic; kSessions: each turn's new input and output
  SessionsSpec sessions;  // kind == kSessions
  InferencePerfSpec inference_perf;  // kind == kInferencePerf (its own arrivals and lengths)
  // Each request's n and beam_width drawn from this weighted mix, replacing the values from
  // the trace or generator. Empty: keep them (generators: n = beam_width = 1).
  std::vector<SamplingChoice> sampling;
  // Keep only requests with prompt + output < max_total_tokens (strict; the vLLM paper:
  // 2048). 0 = keep all. Lengths files are filtered row by row before the rows meet the
  // arrival process and independent lengths are redrawn, so synthetic arrivals are never
  // thinned; trace replay drops requests. Sessions: 0 only (sessions.max_context_tokens).
  std::int64_t max_total_tokens = 0;
  // Seconds: only requests arriving before duration_s (0 = no limit). Trace replay: on the
  // trace's clock after time_scale.
  double duration_s = 0.0;
  // At most this many requests (0 = no limit). A synthetic or sessions workload needs
  // duration_s or max_requests, except file_order, which ends with its file.
  // REQUIRES (validate): at most kMaxGeneratedRequests for a synthetic or sessions workload
  // (min(arrival.rate * duration_s, max_requests)).
  std::uint64_t max_requests = 0;
  std::uint64_t seed = 0;  // every random draw derives from it (seed.h)
  // kArtifact: the artifact's generators, bit for bit (seed.h). Only for a synthetic
  // poisson_quantum + cycle_shuffle workload with seed < 2^32; the sampling mix keeps
  // pagesim's stream (the artifact gives every request of a run the same n).
  WorkloadRng rng = WorkloadRng::kPagesim;
  OversizePolicy oversize = OversizePolicy::kError;  // requests that can never be scheduled
};

// Names as written in configs: the value's name in its table above.
std::string_view to_string(WorkloadKind kind);
std::string_view to_string(LengthsKind kind);
std::string_view to_string(WorkloadRng rng);

}  // namespace pagesim::traces

#include "traces/make_source.h"

#include <algorithm>

#include <fmt/format.h>

#include <cmath>
#include <utility>

#include "traces/cycle_shuffle_source.h"
#include "traces/inference_perf_source.h"
#include "traces/length_model.h"
#include "traces/lengths_csv_source.h"
#include "traces/max_total_filter.h"
#include "traces/request_limit.h"
#include "traces/sampling_mix.h"
#include "traces/seed.h"
#include "traces/synthetic_source.h"
#include "traces/time_scale_source.h"
#include "traces/trace_error.h"

namespace pagesim::traces {

void validate(const WorkloadSpec& spec) {
  if (spec.max_total_tokens < 0 || spec.max_total_tokens == 1) {
    throw SpecError("max_total_tokens",
                    "0 (no limit) or a limit >= 2 tokens (every request has prompt >= 1)",
                    fmt::format("{}", spec.max_total_tokens));
  }
  if (!std::isfinite(spec.duration_s) || spec.duration_s < 0.0) {
    throw SpecError("duration_s", "a number of seconds >= 0 (0 = no limit)",
                    fmt::format("{}", spec.duration_s));
  }
  if (!spec.sampling.empty()) validate(spec.sampling, "sampling");

  if (spec.kind == WorkloadKind::kTrace) {
    if (spec.rng == WorkloadRng::kArtifact) {
      throw SpecError("rng", "pagesim for a trace workload (artifact reproduces the vLLM "
                      "artifact's synthetic workload)", "artifact");
    }
    const TraceFileSpec& t = spec.trace;
    if (t.path.empty()) throw SpecError("trace.path", "the path of a trace file", "''");
    if (t.format == TraceFormat::kLengths) {
      throw SpecError("trace.format",
                      "a format with arrival times (for a lengths file use a synthetic "
                      "workload with lengths.kind file_order, empirical or cycle_shuffle)",
                      "lengths");
    }
    if (t.hash_block_tokens < 0) {
      throw SpecError("trace.hash_block_tokens", "a number of tokens >= 0 (0 = format default)",
                      fmt::format("{}", t.hash_block_tokens));
    }
    if (!std::isfinite(t.time_scale) || t.time_scale <= 0.0) {
      throw SpecError("trace.time_scale", "a positive factor", fmt::format("{}", t.time_scale));
    }
    return;
  }

  if (spec.kind == WorkloadKind::kInferencePerf) {
    if (spec.rng == WorkloadRng::kArtifact)
      throw SpecError("rng", "pagesim for an inference_perf workload (artifact reproduces the vLLM artifact's "
                      "synthetic workload)", "artifact");
    if (spec.max_total_tokens != 0)
      throw SpecError("max_total_tokens",
                      "0 for an inference_perf workload (inference-perf sends every prompt of its pool)",
                      fmt::format("{}", spec.max_total_tokens));
    if (!spec.sampling.empty())
      throw SpecError("sampling", "no sampling mix for an inference_perf workload (it sends n = 1 completions)",
                      fmt::format("{} entries", spec.sampling.size()));
    validate(spec.inference_perf, "inference_perf");
    return;
  }
  validate(spec.arrival, "arrival");
  if (spec.kind == WorkloadKind::kSessions) {
    if (spec.rng == WorkloadRng::kArtifact)
      throw SpecError("rng", "pagesim for a sessions workload (artifact reproduces the vLLM artifact's synthetic "
                      "workload)", "artifact");
    if (spec.max_total_tokens != 0)
      throw SpecError("max_total_tokens",
                      "0 for a sessions workload (a session's prompts grow turn by turn: limit them with "
                      "sessions.max_context_tokens)",
                      fmt::format("{}", spec.max_total_tokens));
    if (spec.lengths.kind != LengthsKind::kDistributions && spec.lengths.kind != LengthsKind::kEmpirical)
      throw SpecError("lengths.kind",
                      "distributions or empirical for a sessions workload (each turn draws its new input and "
                      "output)",
                      std::string(to_string(spec.lengths.kind)));
    validate(spec.sessions, "sessions");
  }
  if (spec.rng == WorkloadRng::kArtifact) {
    if (spec.lengths.kind != LengthsKind::kCycleShuffle) {
      throw SpecError("lengths.kind",
                      "cycle_shuffle with rng: artifact (the vLLM artifact's only lengths kind)",
                      std::string(to_string(spec.lengths.kind)));
    }
    validate_artifact(spec.arrival, spec.seed);
  }
  const LengthsSpec& l = spec.lengths;
  if (l.kind == LengthsKind::kDistributions) {
    validate(l.prompt, "lengths.prompt", 1);
    validate(l.output, "lengths.output", 0);
  } else if (l.path.empty()) {
    throw SpecError("lengths.path", "the path of a lengths file", "''");
  }
  if (l.kind != LengthsKind::kFileOrder && spec.duration_s == 0.0 && spec.max_requests == 0) {
    throw SpecError("duration_s",
                    "a positive duration or max_requests > 0 (a synthetic workload does not "
                    "end by itself)",
                    "neither");
  }
  // Requests arrive lazily, but those the GPU cannot serve yet wait in memory: bound how many
  // the workload can generate (rate * duration_s, or max_requests if fewer).
  const std::string limit = fmt::format("at most {} requests (kMaxGeneratedRequests: a synthetic workload far "
                                        "beyond what the GPU serves queues them all in memory)",
                                        kMaxGeneratedRequests);
  const double implied = spec.arrival.rate * spec.duration_s;
  const auto max_requests = static_cast<double>(spec.max_requests);
  if (spec.duration_s > 0.0 && implied > static_cast<double>(kMaxGeneratedRequests) &&
      (spec.max_requests == 0 || max_requests > static_cast<double>(kMaxGeneratedRequests)))
    throw SpecError("arrival.rate",
                    limit + ": lower workload.arrival.rate or workload.duration_s, or set workload.max_requests",
                    fmt::format("{:g} req/s for workload.duration_s {:g} s = {:.3g} requests", spec.arrival.rate,
                                spec.duration_s, spec.max_requests == 0 ? implied : std::min(implied, max_requests)));
  if (spec.duration_s == 0.0 && spec.max_requests > kMaxGeneratedRequests)
    throw SpecError("max_requests", limit, fmt::format("{}", spec.max_requests));
}

std::unique_ptr<RequestSource> make_source(const WorkloadSpec& spec) {
  validate(spec);
  std::unique_ptr<RequestSource> source;
  if (spec.kind == WorkloadKind::kTrace) {
    source = open_trace(spec.trace.path,
                        {spec.trace.format, spec.trace.hash_block_tokens, spec.trace.name, spec.seed});
    if (spec.trace.time_scale != 1.0) {
      source = std::make_unique<TimeScaleSource>(std::move(source), spec.trace.time_scale);
    }
    if (spec.max_total_tokens > 0) {
      source = std::make_unique<MaxTotalFilter>(std::move(source), spec.max_total_tokens);
    }
  } else if (spec.kind == WorkloadKind::kInferencePerf) {
    source = std::make_unique<InferencePerfSource>(spec.inference_perf, spec.seed);
  } else if (spec.kind == WorkloadKind::kSessions) {
    const LengthsSpec& l = spec.lengths;
    std::unique_ptr<LengthModel> turns;
    if (l.kind == LengthsKind::kDistributions)
      turns = std::make_unique<IndependentLengths>(
          make_length_distribution(l.prompt, derive_seed(spec.seed, SeedStream::kPromptLengths), "lengths.prompt", 1),
          make_length_distribution(l.output, derive_seed(spec.seed, SeedStream::kOutputLengths), "lengths.output", 0),
          0);
    else
      turns = std::make_unique<EmpiricalLengths>(load_lengths(l.path, l.columns, 0, l.name),
                                                 derive_seed(spec.seed, SeedStream::kRowDraws));
    source = std::make_unique<SessionSource>(
        spec.sessions, make_arrival_process(spec.arrival, derive_seed(spec.seed, SeedStream::kArrivals)),
        std::move(turns), spec.seed);
  } else {
    const LengthsSpec& l = spec.lengths;
    const std::uint64_t arrival_seed = derive_seed(spec.seed, SeedStream::kArrivals);
    switch (l.kind) {
      case LengthsKind::kDistributions: {
        auto model = std::make_unique<IndependentLengths>(
            make_length_distribution(l.prompt, derive_seed(spec.seed, SeedStream::kPromptLengths),
                                     "lengths.prompt", 1),
            make_length_distribution(l.output, derive_seed(spec.seed, SeedStream::kOutputLengths),
                                     "lengths.output", 0),
            spec.max_total_tokens);
        source = std::make_unique<SyntheticSource>(make_arrival_process(spec.arrival, arrival_seed),
                                                   std::move(model));
        break;
      }
      case LengthsKind::kEmpirical: {
        auto model = std::make_unique<EmpiricalLengths>(
            load_lengths(l.path, l.columns, spec.max_total_tokens, l.name),
            derive_seed(spec.seed, SeedStream::kRowDraws));
        source = std::make_unique<SyntheticSource>(make_arrival_process(spec.arrival, arrival_seed),
                                                   std::move(model));
        break;
      }
      case LengthsKind::kFileOrder:
        source = std::make_unique<LengthsCsvSource>(
            l.path, l.columns, make_arrival_process(spec.arrival, arrival_seed),
            spec.max_total_tokens, l.name);
        break;
      case LengthsKind::kCycleShuffle: {
        // The artifact seeds NumPy and CPython with the seed itself.
        const bool artifact = spec.rng == WorkloadRng::kArtifact;
        source = std::make_unique<CycleShuffleSource>(
            load_lengths(l.path, l.columns, spec.max_total_tokens, l.name), spec.arrival,
            artifact ? spec.seed : arrival_seed,
            artifact ? spec.seed : derive_seed(spec.seed, SeedStream::kShuffle), spec.duration_s,
            spec.max_requests, spec.rng);
        break;
      }
    }
  }
  if (!spec.sampling.empty()) {
    source = std::make_unique<SamplingMixSource>(std::move(source), spec.sampling,
                                                 derive_seed(spec.seed, SeedStream::kSampling));
  }
  if (spec.duration_s > 0.0 || spec.max_requests > 0) {
    source = std::make_unique<LimitSource>(std::move(source), spec.duration_s, spec.max_requests);
  }
  return source;
}

}  // namespace pagesim::traces

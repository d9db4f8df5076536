// make_source(): builds the RequestSource a WorkloadSpec describes (workload_spec.h).
//
// The chain, innermost first: the trace reader (then TimeScaleSource when time_scale != 1
// and MaxTotalFilter when max_total_tokens > 0) or the synthetic generator (filtering
// inside, see WorkloadSpec::max_total_tokens); then SamplingMixSource when a sampling mix is
// given; then LimitSource for duration_s / max_requests. The caller owns the result.
#pragma once

#include <memory>

#include "traces/request_source.h"
#include "traces/workload_spec.h"

namespace pagesim::traces {

// Throws SpecError naming the first invalid field, TraceError when a file cannot be read
// (trace files are opened and their header checked here; rows are read as the source is
// pulled; lengths files for empirical and cycle_shuffle are read whole here).
std::unique_ptr<RequestSource> make_source(const WorkloadSpec& spec);

// Checks `spec` without opening files. Throws SpecError naming the first invalid field.
void validate(const WorkloadSpec& spec);

}  // namespace pagesim::traces

// `pagesim presets`: every name a config may give for model, gpu, scheduler.kind,
// allocator.kind (with the contiguous placements) and allocator.eviction, with the
// facts that tell them apart. Read from the preset tables (sim/cost/presets.h) and the name
// tables beside each enum, so a preset or policy added there is listed without change here.
// Stateless; safe from any thread.
#pragma once

#include <string>

namespace pagesim::sim {

// The listing as printed: one titled table per kind of name.
std::string format_presets();

}  // namespace pagesim::sim

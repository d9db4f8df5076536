// Fuzzes format auto-detection (traces/trace_format.h) and the reader it picks: the input is
// a trace file of any format. detect_format() must name a format or throw TraceError;
// open_trace() with kAuto then streams it to the end (a lengths file is refused with a
// TraceError), and every request must satisfy what RequestSource promises (arrivals finite,
// >= 0 and non-decreasing, prompt >= 1). The only accepted failure is TraceError.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "scratch_file.h"
#include "traces/trace_error.h"
#include "traces/trace_format.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pagesim;
  fuzz::ScratchFile file(fuzz::as_text(data, size));
  try {
    if (traces::detect_format(file.path()) == traces::TraceFormat::kAuto) __builtin_trap();
  } catch (const traces::TraceError&) {
  }
  try {
    auto source = traces::open_trace(file.path());
    double last_s = 0;
    while (auto r = source->next()) {
      if (!std::isfinite(r->arrival_s) || r->arrival_s < last_s || r->prompt_tokens < 1) __builtin_trap();
      last_s = r->arrival_s;
    }
  } catch (const traces::TraceError&) {
  }
  return 0;
}

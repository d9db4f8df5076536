// Fuzzes VidurCsvReader (traces/vidur_csv_reader.h): the input is the trace file. The only
// accepted failure is TraceError.
#include <cstddef>
#include <cstdint>

#include "scratch_file.h"
#include "traces/trace_error.h"
#include "traces/vidur_csv_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pagesim;
  fuzz::ScratchFile file(fuzz::as_text(data, size), ".csv");
  try {
    traces::VidurCsvReader reader(file.path());
    while (reader.next()) {
    }
  } catch (const traces::TraceError&) {
  }
  return 0;
}

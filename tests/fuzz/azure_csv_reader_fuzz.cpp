// Fuzzes AzureCsvReader (traces/azure_csv_reader.h), timestamps included
// (azure_timestamp.h): the input is the trace file. The only accepted failure is TraceError.
#include <cstddef>
#include <cstdint>

#include "scratch_file.h"
#include "traces/azure_csv_reader.h"
#include "traces/trace_error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pagesim;
  fuzz::ScratchFile file(fuzz::as_text(data, size), ".csv");
  try {
    traces::AzureCsvReader reader(file.path());
    while (reader.next()) {
    }
  } catch (const traces::TraceError&) {
  }
  return 0;
}

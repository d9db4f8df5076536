// Fuzzes NativeCsvReader (traces/native_csv_reader.h): the input is the trace file. Read
// twice, without and with a hash block size (16), so the hash-id count check runs too. The
// only accepted failure is TraceError; anything else escaping, a crash, a leak or UB is a
// finding.
#include <cstddef>
#include <cstdint>

#include "scratch_file.h"
#include "traces/native_csv_reader.h"
#include "traces/trace_error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pagesim;
  fuzz::ScratchFile file(fuzz::as_text(data, size), ".csv");
  for (std::int64_t block : {0, 16}) {
    try {
      traces::NativeCsvReader reader(file.path(), {.hash_block_tokens = block});
      while (reader.next()) {
      }
    } catch (const traces::TraceError&) {
    }
  }
  return 0;
}

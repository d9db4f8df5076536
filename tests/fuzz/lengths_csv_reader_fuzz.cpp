// Fuzzes the lengths-only reader (traces/lengths_csv_reader.h) through load_lengths(), with
// the columns detected from the header and the vLLM paper's length filter (2048). The only
// accepted failure is TraceError.
#include <cstddef>
#include <cstdint>

#include "scratch_file.h"
#include "traces/lengths_csv_reader.h"
#include "traces/trace_error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pagesim;
  fuzz::ScratchFile file(fuzz::as_text(data, size), ".csv");
  try {
    const traces::LengthTable table = traces::load_lengths(file.path(), {}, 2048);
    for (const auto& row : table.rows)
      if (row.prompt_tokens < 1 || row.output_tokens < 0 || row.total_tokens() >= 2048) __builtin_trap();
  } catch (const traces::TraceError&) {
  }
  return 0;
}

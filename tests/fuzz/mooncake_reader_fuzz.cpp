// Fuzzes MooncakeReader (traces/mooncake_reader.h): the input is the JSONL trace. Read with
// the hash-count check on (the default, 512 tokens per id) and off with 1 token per id. The
// only accepted failure is TraceError.
#include <cstddef>
#include <cstdint>

#include "scratch_file.h"
#include "traces/mooncake_reader.h"
#include "traces/trace_error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pagesim;
  fuzz::ScratchFile file(fuzz::as_text(data, size), ".jsonl");
  for (const traces::MooncakeOptions options :
       {traces::MooncakeOptions{}, traces::MooncakeOptions{.hash_block_tokens = 1, .check_hash_count = false}}) {
    try {
      traces::MooncakeReader reader(file.path(), options);
      while (reader.next()) {
      }
    } catch (const traces::TraceError&) {
    }
  }
  return 0;
}

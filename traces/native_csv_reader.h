// NativeCsvReader: streams pagesim's own trace format, a CSV file with a header.
//
// Required columns: arrival_s (seconds, finite, >= 0, non-decreasing), prompt_tokens (>= 1),
// output_tokens (>= 0). Optional: n (>= 1, default 1), beam_width (>= 1, default 1; a row
// may not set both above 1) and hash_ids (space-separated unsigned 64-bit integers, may be
// empty), adapter (the LoRA adapter the request names, an integer >= 0; empty: the base
// model). Columns may come in any order; any other column is an error. Request ids are the
// 0-based data-row ordinals.
// native_csv_writer.h writes this format.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "traces/csv_file.h"
#include "traces/request_source.h"

namespace pagesim::traces {

inline constexpr std::array<std::string_view, 7> kNativeCsvColumns = {
    "arrival_s", "prompt_tokens", "output_tokens", "n", "beam_width", "hash_ids", "adapter"};

struct NativeCsvOptions {
  // Tokens covered by one hash id. When > 0, a non-empty hash_ids field must hold exactly
  // ceil(prompt_tokens / hash_block_tokens) ids, and hash_block_tokens() reports it. 0: the
  // block size is unknown (not checked; hash_block_tokens() reports 0).
  std::int64_t hash_block_tokens = 0;
};

class NativeCsvReader final : public RequestSource {
 public:
  // Opens `path` and checks its header. Throws TraceError. REQUIRES: options valid (>= 0).
  // `name`: as LineReader's.
  explicit NativeCsvReader(std::string path, NativeCsvOptions options = {}, std::string name = {});

  std::optional<TraceRequest> next() override;
  std::string describe() const override;
  std::int64_t hash_block_tokens() const override { return options_.hash_block_tokens; }

 private:
  CsvFile csv_;
  NativeCsvOptions options_;
  std::size_t arrival_col_, prompt_col_, output_col_;
  std::optional<std::size_t> n_col_, beam_col_, hash_col_, adapter_col_;
  std::uint64_t next_id_ = 0;
  double last_arrival_s_ = 0.0;
};

// Parses a space-separated list of unsigned 64-bit ids into *out (cleared first). Returns
// the offending item, or an empty view when all parsed. An empty text gives an empty list.
std::string_view parse_hash_ids(std::string_view text, std::vector<std::uint64_t>* out);

}  // namespace pagesim::traces

// VidurCsvReader: streams a Vidur-style request trace (CSV with a header).
//
// Uses the columns arrived_at (seconds, finite, >= 0, non-decreasing), num_prefill_tokens
// (>= 1) and num_decode_tokens (>= 0), in any order; other columns (num_total_tokens,
// pd_ratio, ...) are ignored. Every request has n = 1, beam_width = 1, no hash ids.
// Request ids are the 0-based data-row ordinals.
#pragma once

#include <cstdint>
#include <string>

#include "traces/csv_file.h"
#include "traces/request_source.h"

namespace pagesim::traces {

class VidurCsvReader final : public RequestSource {
 public:
  // Opens `path` and checks its header. Throws TraceError. `name`: as LineReader's.
  explicit VidurCsvReader(std::string path, std::string name = {});

  std::optional<TraceRequest> next() override;
  std::string describe() const override;

 private:
  CsvFile csv_;
  std::size_t arrival_col_, prompt_col_, output_col_;
  std::uint64_t next_id_ = 0;
  double last_arrival_s_ = 0.0;
};

}  // namespace pagesim::traces

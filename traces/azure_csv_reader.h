// AzureCsvReader: streams an Azure LLM inference trace (Azure Public Dataset, 2023/2024).
//
// Uses the columns TIMESTAMP (azure_timestamp.h, non-decreasing), ContextTokens (>= 1,
// the prompt) and GeneratedTokens (>= 0, the output), in any order; other columns are
// ignored. arrival_s counts seconds from the first row's timestamp, computed exactly from
// integer nanoseconds. Every request has n = 1, beam_width = 1, no hash ids. Request ids are
// the 0-based data-row ordinals.
#pragma once

#include <cstdint>
#include <string>

#include "traces/csv_file.h"
#include "traces/request_source.h"

namespace pagesim::traces {

class AzureCsvReader final : public RequestSource {
 public:
  // Opens `path` and checks its header. Throws TraceError. `name`: as LineReader's.
  explicit AzureCsvReader(std::string path, std::string name = {});

  std::optional<TraceRequest> next() override;
  std::string describe() const override;

  // Timestamp of the first row, ns since 1970-01-01 UTC; 0 before the first next().
  std::int64_t first_timestamp_ns() const { return first_ns_; }

 private:
  CsvFile csv_;
  std::size_t time_col_, prompt_col_, output_col_;
  std::uint64_t next_id_ = 0;
  std::int64_t first_ns_ = 0;
  std::int64_t last_ns_ = 0;
};

}  // namespace pagesim::traces

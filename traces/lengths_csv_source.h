// LengthsCsvSource: streams the rows of a lengths-only CSV file in file order, each paired
// with the next time of an arrival process. Rows with prompt + output >= max_total_tokens
// are skipped before pairing (strict '<', as the vLLM artifact filters), so the filter does
// not thin the arrivals. The stream ends with the file. Request ids count the requests
// emitted (0, 1, ...). Holds one row in memory. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "traces/arrival_process.h"
#include "traces/lengths_csv_reader.h"
#include "traces/request_source.h"

namespace pagesim::traces {

class LengthsCsvSource final : public RequestSource {
 public:
  // Opens `path` (throws TraceError). max_total_tokens: 0 = keep every row. `name`: as
  // LineReader's. REQUIRES: arrivals non-null, max_total_tokens >= 0.
  LengthsCsvSource(std::string path, const LengthColumns& columns,
                   std::unique_ptr<ArrivalProcess> arrivals, std::int64_t max_total_tokens = 0,
                   std::string name = {});

  std::optional<TraceRequest> next() override;
  std::string describe() const override;

  std::uint64_t rows_skipped() const { return rows_skipped_; }

 private:
  LengthsCsvReader reader_;
  std::unique_ptr<ArrivalProcess> arrivals_;
  std::int64_t max_total_tokens_;
  std::uint64_t next_id_ = 0;
  std::uint64_t rows_skipped_ = 0;
};

}  // namespace pagesim::traces

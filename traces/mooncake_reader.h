// MooncakeReader: streams a Mooncake trace, one JSON object per line (JSONL).
//
// Each line holds the keys timestamp (milliseconds, a finite number >= 0, non-decreasing),
// input_length (integer >= 1, the prompt), output_length (integer >= 0) and hash_ids (array of
// unsigned 64-bit integers, one per hash block of the prompt: equal ids mean an identical
// prefix block, chained like a prefix hash). Other keys are ignored. arrival_s =
// timestamp / 1000, not shifted. Every request has n = 1, beam_width = 1. Request ids are the
// 0-based data-line ordinals. Parses with nlohmann::json one line at a time.
#pragma once

#include <cstdint>
#include <string>

#include "traces/line_reader.h"
#include "traces/request_source.h"

namespace pagesim::traces {

struct MooncakeOptions {
  // Tokens covered by one hash id (512 in the published Mooncake traces). >= 1.
  std::int64_t hash_block_tokens = 512;
  // Require exactly ceil(input_length / hash_block_tokens) ids per line (the published traces
  // satisfy it). False: any count is accepted.
  bool check_hash_count = true;
};

class MooncakeReader final : public RequestSource {
 public:
  // Opens `path`. Throws TraceError. REQUIRES: options.hash_block_tokens >= 1.
  // `name`: as LineReader's.
  explicit MooncakeReader(std::string path, MooncakeOptions options = {}, std::string name = {});

  std::optional<TraceRequest> next() override;
  std::string describe() const override;
  std::int64_t hash_block_tokens() const override { return options_.hash_block_tokens; }

 private:
  LineReader lines_;
  MooncakeOptions options_;
  std::uint64_t next_id_ = 0;
  double last_timestamp_ms_ = 0.0;
};

}  // namespace pagesim::traces

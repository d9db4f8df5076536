#include "traces/vidur_csv_reader.h"

#include <fmt/format.h>

#include <utility>

#include "traces/trace_error.h"

namespace pagesim::traces {

VidurCsvReader::VidurCsvReader(std::string path, std::string name) : csv_(std::move(path), std::move(name)) {
  arrival_col_ = csv_.require("arrived_at");
  prompt_col_ = csv_.require("num_prefill_tokens");
  output_col_ = csv_.require("num_decode_tokens");
}

std::optional<TraceRequest> VidurCsvReader::next() {
  if (!csv_.next_row()) return std::nullopt;
  TraceRequest r;
  r.id = next_id_;
  r.arrival_s = csv_.arrival_time(arrival_col_, last_arrival_s_);
  r.prompt_tokens = csv_.integer(prompt_col_, 1, kMaxTokens);
  r.output_tokens = csv_.integer(output_col_, 0, kMaxTokens);
  last_arrival_s_ = r.arrival_s;
  ++next_id_;
  return r;
}

std::string VidurCsvReader::describe() const {
  return fmt::format("vidur csv '{}'", csv_.path());
}

}  // namespace pagesim::traces

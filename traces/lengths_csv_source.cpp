#include "traces/lengths_csv_source.h"

#include <fmt/format.h>

#include <cassert>
#include <utility>

namespace pagesim::traces {

LengthsCsvSource::LengthsCsvSource(std::string path, const LengthColumns& columns,
                                   std::unique_ptr<ArrivalProcess> arrivals,
                                   std::int64_t max_total_tokens, std::string name)
    : reader_(std::move(path), columns, std::move(name)),
      arrivals_(std::move(arrivals)),
      max_total_tokens_(max_total_tokens) {
  assert(arrivals_ && max_total_tokens_ >= 0);
}

std::optional<TraceRequest> LengthsCsvSource::next() {
  while (auto row = reader_.next()) {
    if (max_total_tokens_ > 0 && row->total_tokens() >= max_total_tokens_) {
      ++rows_skipped_;
      continue;
    }
    TraceRequest r;
    r.id = next_id_++;
    r.arrival_s = arrivals_->next();
    r.prompt_tokens = row->prompt_tokens;
    r.output_tokens = row->output_tokens;
    return r;
  }
  return std::nullopt;
}

std::string LengthsCsvSource::describe() const {
  std::string out = fmt::format("lengths csv '{}' ({}, {}) in file order, arrivals {}",
                                reader_.path(), reader_.prompt_column(), reader_.output_column(),
                                arrivals_->describe());
  if (max_total_tokens_ > 0) out += fmt::format(", prompt + output < {}", max_total_tokens_);
  return out;
}

}  // namespace pagesim::traces

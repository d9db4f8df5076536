#include "traces/synthetic_source.h"

#include <fmt/format.h>

#include <cassert>
#include <utility>

namespace pagesim::traces {

SyntheticSource::SyntheticSource(std::unique_ptr<ArrivalProcess> arrivals,
                                 std::unique_ptr<LengthModel> lengths)
    : arrivals_(std::move(arrivals)), lengths_(std::move(lengths)) {
  assert(arrivals_ && lengths_);
}

std::optional<TraceRequest> SyntheticSource::next() {
  TraceRequest r;
  r.id = next_id_++;
  r.arrival_s = arrivals_->next();
  const LengthRow row = lengths_->next();
  r.prompt_tokens = row.prompt_tokens;
  r.output_tokens = row.output_tokens;
  return r;
}

std::string SyntheticSource::describe() const {
  return fmt::format("synthetic: arrivals {}; lengths {}", arrivals_->describe(),
                     lengths_->describe());
}

}  // namespace pagesim::traces

#include "traces/time_scale_source.h"

#include <fmt/format.h>

#include <cassert>
#include <cmath>
#include <utility>

namespace pagesim::traces {

TimeScaleSource::TimeScaleSource(std::unique_ptr<RequestSource> inner, double factor)
    : inner_(std::move(inner)), factor_(factor) {
  assert(inner_ && std::isfinite(factor_) && factor_ > 0.0);
}

std::optional<TraceRequest> TimeScaleSource::next() {
  auto r = inner_->next();
  if (r) r->arrival_s *= factor_;
  return r;
}

std::string TimeScaleSource::describe() const {
  return fmt::format("{}; arrival times x {}", inner_->describe(), factor_);
}

}  // namespace pagesim::traces

#include "traces/request_limit.h"

#include <fmt/format.h>

#include <cassert>
#include <utility>

namespace pagesim::traces {

LimitSource::LimitSource(std::unique_ptr<RequestSource> inner, double duration_s,
                         std::uint64_t max_requests)
    : inner_(std::move(inner)), duration_s_(duration_s), max_requests_(max_requests) {
  assert(inner_ && duration_s_ >= 0.0);
}

std::optional<TraceRequest> LimitSource::next() {
  if (done_ || (max_requests_ > 0 && passed_ == max_requests_)) {
    done_ = true;
    return std::nullopt;
  }
  auto r = inner_->next();
  if (!r || (duration_s_ > 0.0 && r->arrival_s >= duration_s_)) {
    done_ = true;
    return std::nullopt;
  }
  ++passed_;
  return r;
}

std::string LimitSource::describe() const {
  std::string out = inner_->describe();
  if (duration_s_ > 0.0) out += fmt::format("; arrivals before {} s", duration_s_);
  if (max_requests_ > 0) out += fmt::format("; at most {} requests", max_requests_);
  return out;
}

}  // namespace pagesim::traces

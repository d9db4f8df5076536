// SyntheticSource: an endless stream of requests pairing an arrival process with a length
// model. Request i gets the i-th arrival time and the i-th length pair; n = beam_width = 1,
// no hash ids (wrap in SamplingMixSource for others, in LimitSource to end the stream).
// Owns both parts; holds nothing per request. Not thread-safe.
#pragma once

#include <memory>

#include "traces/arrival_process.h"
#include "traces/length_model.h"
#include "traces/request_source.h"

namespace pagesim::traces {

class SyntheticSource final : public RequestSource {
 public:
  // REQUIRES: arrivals, lengths non-null.
  SyntheticSource(std::unique_ptr<ArrivalProcess> arrivals, std::unique_ptr<LengthModel> lengths);

  std::optional<TraceRequest> next() override;  // never nullopt
  std::string describe() const override;

 private:
  std::unique_ptr<ArrivalProcess> arrivals_;
  std::unique_ptr<LengthModel> lengths_;
  std::uint64_t next_id_ = 0;
};

}  // namespace pagesim::traces

// SamplingMixSource: a decorator that sets each request's n and beam_width from a weighted
// mix of choices, e.g. {weight 1, n 4} for parallel sampling with 4 samples, or
// {0.5, beam 2}, {0.5, beam 4} for a half-and-half beam-search mix. Each request draws one
// choice independently (Boost discrete_distribution, own seeded engine), replacing the values
// it had. Owns the wrapped source. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include <boost/random/discrete_distribution.hpp>

#include "traces/request_source.h"
#include "traces/sampling_choice.h"

namespace pagesim::traces {

class SamplingMixSource final : public RequestSource {
 public:
  // Throws SpecError (validate()). REQUIRES: inner non-null.
  SamplingMixSource(std::unique_ptr<RequestSource> inner, std::vector<SamplingChoice> mix,
                    std::uint64_t seed);

  std::optional<TraceRequest> next() override;
  std::string describe() const override;
  std::int64_t hash_block_tokens() const override { return inner_->hash_block_tokens(); }

 private:
  std::unique_ptr<RequestSource> inner_;
  std::vector<SamplingChoice> mix_;
  std::mt19937_64 engine_;
  boost::random::discrete_distribution<std::size_t, double> pick_;
};

}  // namespace pagesim::traces

// SamplingMixSource: a decorator that sets each request's n and beam_width from a weighted
// mix of choices, e.g. {weight 1, n 4} for parallel sampling with 4 samples, or
// {0.5, beam 2}, {0.5, beam 4} for a half-and-half beam-search mix. Each request draws one
// choice independently (Boost discrete_distribution, own seeded engine), replacing the values
// it had. Owns the wrapped source. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string_view>
#include <vector>

#include <boost/random/discrete_distribution.hpp>

#include "traces/request_source.h"

namespace pagesim::traces {

struct SamplingChoice {
  double weight = 1.0;          // relative frequency, >= 0 (the weights need not sum to 1)
  std::int32_t n = 1;           // parallel samples, >= 1
  std::int32_t beam_width = 1;  // beams, >= 1 (1 = no beam search)
};

// Throws SpecError naming `field`[i].<member> unless every n and beam_width is >= 1 (not both
// > 1 in one choice), every weight finite and >= 0, and the weights sum to more than 0.
void validate(const std::vector<SamplingChoice>& mix, std::string_view field = "sampling");

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

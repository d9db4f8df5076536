// SamplingChoice: one choice of a sampling mix (SamplingMixSource, sampling_mix.h): its
// weight and the n and beam_width a request that draws it gets. Apart from the source so
// that workload specs name mixes without Boost.Random's headers. A plain value type.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace pagesim::traces {

struct SamplingChoice {
  double weight = 1.0;          // relative frequency, >= 0 (the weights need not sum to 1)
  std::int32_t n = 1;           // parallel samples, >= 1
  std::int32_t beam_width = 1;  // beams, >= 1 (1 = no beam search)
};

// Throws SpecError naming `field`[i].<member> unless every n and beam_width is >= 1 (not both
// > 1 in one choice), every weight finite and >= 0, and the weights sum to more than 0.
void validate(const std::vector<SamplingChoice>& mix, std::string_view field = "sampling");

}  // namespace pagesim::traces

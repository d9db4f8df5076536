#include "traces/sampling_choice.h"

#include <fmt/format.h>

#include <cmath>
#include <string>

#include "traces/trace_error.h"

namespace pagesim::traces {

void validate(const std::vector<SamplingChoice>& mix, std::string_view field) {
  if (mix.empty()) throw SpecError(std::string(field), "at least one choice", "none");
  double sum = 0.0;
  for (std::size_t i = 0; i < mix.size(); ++i) {
    const SamplingChoice& c = mix[i];
    if (!std::isfinite(c.weight) || c.weight < 0.0) {
      throw SpecError(fmt::format("{}[{}].weight", field, i), "a finite weight >= 0",
                      fmt::format("{}", c.weight));
    }
    if (c.n < 1) {
      throw SpecError(fmt::format("{}[{}].n", field, i), "a positive number of samples",
                      fmt::format("{}", c.n));
    }
    if (c.beam_width < 1) {
      throw SpecError(fmt::format("{}[{}].beam_width", field, i), "a positive beam width",
                      fmt::format("{}", c.beam_width));
    }
    if (c.n > 1 && c.beam_width > 1) {  // the experiment config's check, for specs built in code
      throw SpecError(fmt::format("{}[{}].beam_width", field, i),
                      "1 when n > 1 (a request is either parallel sampling (n) or beam search (beam_width))",
                      fmt::format("{} with n = {}", c.beam_width, c.n));
    }
    sum += c.weight;
  }
  if (!(sum > 0.0)) throw SpecError(std::string(field), "weights with a positive sum", "all 0");
}

}  // namespace pagesim::traces

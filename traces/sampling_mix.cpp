#include "traces/sampling_mix.h"

#include <fmt/format.h>

#include <cassert>
#include <utility>

#include "traces/trace_error.h"

namespace pagesim::traces {

namespace {

std::vector<SamplingChoice> validated(std::vector<SamplingChoice> mix) {
  validate(mix);
  return mix;
}

std::vector<double> weights_of(const std::vector<SamplingChoice>& mix) {
  std::vector<double> w;
  w.reserve(mix.size());
  for (const auto& c : mix) w.push_back(c.weight);
  return w;
}

}  // namespace

SamplingMixSource::SamplingMixSource(std::unique_ptr<RequestSource> inner,
                                     std::vector<SamplingChoice> mix, std::uint64_t seed)
    : inner_(std::move(inner)), mix_(validated(std::move(mix))), engine_(seed) {
  assert(inner_);
  const std::vector<double> w = weights_of(mix_);
  pick_ = boost::random::discrete_distribution<std::size_t, double>(w.begin(), w.end());
}

std::optional<TraceRequest> SamplingMixSource::next() {
  auto r = inner_->next();
  if (!r) return r;
  const SamplingChoice& c = mix_[pick_(engine_)];
  r->n = c.n;
  r->beam_width = c.beam_width;
  return r;
}

std::string SamplingMixSource::describe() const {
  std::string mix;
  for (const auto& c : mix_) {
    mix += fmt::format("{}{}: n={} beam={}", mix.empty() ? "" : ", ", c.weight, c.n, c.beam_width);
  }
  return fmt::format("{}; sampling mix {{{}}}", inner_->describe(), mix);
}

}  // namespace pagesim::traces

#include "traces/sampling_mix.h"

#include <fmt/format.h>

#include <cassert>
#include <cmath>
#include <utility>

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

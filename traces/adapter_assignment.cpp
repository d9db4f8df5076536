#include "traces/adapter_assignment.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include <boost/random/uniform_01.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <fmt/format.h>

#include "traces/seed.h"

namespace pagesim::traces {

AdapterAssignmentSource::AdapterAssignmentSource(std::unique_ptr<RequestSource> inner, std::int32_t adapters,
                                                 AdapterPopularity popularity, double alpha, std::uint64_t seed)
    : inner_(std::move(inner)),
      adapters_(adapters),
      popularity_(popularity),
      alpha_(alpha),
      rng_(derive_seed(seed, SeedStream::kAdapters)) {
  assert(inner_ && adapters_ >= 1);
  if (popularity_ == AdapterPopularity::kZipf) {
    assert(alpha_ > 0);
    double sum = 0;
    for (std::int32_t k = 0; k < adapters_; ++k) cumulative_.push_back(sum += std::pow(k + 1.0, -alpha_));
    for (double& c : cumulative_) c /= sum;
    cumulative_.back() = 1.0;
  }
}

std::optional<TraceRequest> AdapterAssignmentSource::next() {
  std::optional<TraceRequest> r = inner_->next();
  if (!r || r->adapter != kNoAdapter) return r;
  if (popularity_ == AdapterPopularity::kUniform) {
    r->adapter = boost::random::uniform_int_distribution<std::int32_t>(0, adapters_ - 1)(rng_);
  } else {
    const double u = boost::random::uniform_01<double>()(rng_);
    r->adapter = static_cast<std::int32_t>(std::upper_bound(cumulative_.begin(), cumulative_.end(), u) -
                                           cumulative_.begin());
    r->adapter = std::min(r->adapter, adapters_ - 1);
  }
  return r;
}

std::string AdapterAssignmentSource::describe() const {
  return fmt::format("{}, {} LoRA adapters ({})", inner_->describe(), adapters_,
                     popularity_ == AdapterPopularity::kUniform ? "uniform" : fmt::format("zipf alpha {}", alpha_));
}

}  // namespace pagesim::traces

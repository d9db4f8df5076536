// AdapterAssignmentSource: a decorator that makes each request of another source name one of
// `adapters` LoRA adapters, drawn independently per request from a popularity distribution:
// uniform, or Zipf with exponent alpha (adapter k, 0-based, has weight 1 / (k + 1)^alpha:
// adapter 0 is the most popular). S-LoRA's synthetic workloads draw adapters the same way
// (Sheng et al., MLSys 2024, Section 7.1: "the adapter ... follows a power-law
// distribution" with exponent alpha, uniform as a special case).
// A request the inner source already gives an adapter keeps it (a trace's adapter column).
// Draws come from their own stream (SeedStream::kAdapters), so the rest of the workload is
// the same with or without adapters. Owns the wrapped source. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "traces/request_source.h"

namespace pagesim::traces {

enum class AdapterPopularity { kUniform, kZipf };

class AdapterAssignmentSource final : public RequestSource {
 public:
  // REQUIRES: inner non-null, adapters >= 1, alpha > 0 for kZipf (checked by the config).
  AdapterAssignmentSource(std::unique_ptr<RequestSource> inner, std::int32_t adapters, AdapterPopularity popularity,
                          double alpha, std::uint64_t seed);

  std::optional<TraceRequest> next() override;
  std::string describe() const override;
  std::int64_t hash_block_tokens() const override { return inner_->hash_block_tokens(); }

 private:
  std::unique_ptr<RequestSource> inner_;
  std::int32_t adapters_;
  AdapterPopularity popularity_;
  double alpha_;
  std::mt19937_64 rng_;
  std::vector<double> cumulative_;  // Zipf: cumulative weights, the last == 1
};

}  // namespace pagesim::traces

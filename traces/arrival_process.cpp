#include "traces/arrival_process.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/random/exponential_distribution.hpp>
#include <boost/random/gamma_distribution.hpp>
#include <boost/random/poisson_distribution.hpp>
#include <cmath>
#include <limits>
#include <random>

#include "traces/artifact_random.h"
#include "traces/trace_error.h"

namespace pagesim::traces {
namespace {

// Smallest mean count per quantum accepted: below it, the process would spend millions of
// draws per arrival.
constexpr double kMinQuantumMean = 1e-6;

class PoissonArrivals final : public ArrivalProcess {
 public:
  PoissonArrivals(double rate, std::uint64_t seed) : engine_(seed), gap_(rate), rate_(rate) {}
  double next() override {
    t_ += gap_(engine_);
    return t_;
  }
  std::string describe() const override { return fmt::format("poisson(rate={} req/s)", rate_); }

 private:
  std::mt19937_64 engine_;
  boost::random::exponential_distribution<double> gap_;
  double rate_;
  double t_ = 0.0;
};

class PoissonQuantumArrivals final : public ArrivalProcess {
 public:
  PoissonQuantumArrivals(double rate, double quantum_s, std::uint64_t seed)
      : engine_(seed), count_(rate * quantum_s), rate_(rate), quantum_s_(quantum_s) {}
  double next() override {
    while (pending_ == 0) {
      pending_ = count_(engine_);
      quantum_ = next_quantum_++;
    }
    --pending_;
    return static_cast<double>(quantum_) * quantum_s_;
  }
  std::string describe() const override {
    return fmt::format("poisson_quantum(rate={} req/s, quantum={} s)", rate_, quantum_s_);
  }

 private:
  std::mt19937_64 engine_;
  boost::random::poisson_distribution<std::int64_t, double> count_;
  double rate_;
  double quantum_s_;
  std::int64_t pending_ = 0;       // arrivals left in quantum_
  std::uint64_t quantum_ = 0;      // index of the quantum being emitted
  std::uint64_t next_quantum_ = 0;  // index of the next quantum to draw
};

// Same emission as PoissonQuantumArrivals; only the counts' generator differs.
class ArtifactPoissonQuantumArrivals final : public ArrivalProcess {
 public:
  ArtifactPoissonQuantumArrivals(double rate, double quantum_s, std::uint32_t seed)
      : rng_(seed), lam_(rate * quantum_s), rate_(rate), quantum_s_(quantum_s), seed_(seed) {}
  double next() override {
    while (pending_ == 0) {
      pending_ = rng_.poisson(lam_);
      quantum_ = next_quantum_++;
    }
    --pending_;
    return static_cast<double>(quantum_) * quantum_s_;
  }
  std::string describe() const override {
    return fmt::format("poisson_quantum(rate={} req/s, quantum={} s, NumPy legacy seed {})",
                       rate_, quantum_s_, seed_);
  }

 private:
  NumpyLegacyRandom rng_;
  double lam_;
  double rate_;
  double quantum_s_;
  std::uint32_t seed_;
  std::int64_t pending_ = 0;
  std::uint64_t quantum_ = 0;
  std::uint64_t next_quantum_ = 0;
};

class GammaArrivals final : public ArrivalProcess {
 public:
  GammaArrivals(double rate, double cv, std::uint64_t seed)
      : engine_(seed), gap_(1.0 / (cv * cv), cv * cv / rate), rate_(rate), cv_(cv) {}
  double next() override {
    t_ += gap_(engine_);
    return t_;
  }
  std::string describe() const override {
    return fmt::format("gamma(rate={} req/s, cv={})", rate_, cv_);
  }

 private:
  std::mt19937_64 engine_;
  boost::random::gamma_distribution<double> gap_;  // shape 1/cv^2, scale cv^2/rate
  double rate_;
  double cv_;
  double t_ = 0.0;
};

class ConstantArrivals final : public ArrivalProcess {
 public:
  explicit ConstantArrivals(double rate) : rate_(rate) {}
  double next() override { return static_cast<double>(i_++) / rate_; }
  std::string describe() const override { return fmt::format("constant(rate={} req/s)", rate_); }

 private:
  double rate_;
  std::uint64_t i_ = 0;
};

// A Poisson process on the axis of "on-time" u, mapped to wall time by inserting an
// off-period after every on_s of on-time.
class BurstArrivals final : public ArrivalProcess {
 public:
  BurstArrivals(double rate, double on_s, double off_s, std::uint64_t seed)
      : engine_(seed), gap_(rate), rate_(rate), on_s_(on_s), off_s_(off_s) {}
  double next() override {
    u_ += gap_(engine_);
    const double period = std::floor(u_ / on_s_);
    const double t = period * (on_s_ + off_s_) + (u_ - period * on_s_);
    last_ = std::max(last_, t);  // guards against rounding at period boundaries
    return last_;
  }
  std::string describe() const override {
    return fmt::format("burst(rate={} req/s while on, on={} s, off={} s)", rate_, on_s_, off_s_);
  }

 private:
  std::mt19937_64 engine_;
  boost::random::exponential_distribution<double> gap_;
  double rate_;
  double on_s_;
  double off_s_;
  double u_ = 0.0;
  double last_ = 0.0;
};

void require_positive(double value, std::string_view field, std::string_view member,
                      std::string_view unit) {
  if (std::isfinite(value) && value > 0.0) return;
  throw SpecError(fmt::format("{}.{}", field, member), fmt::format("a positive number{}", unit),
                  fmt::format("{}", value));
}

}  // namespace

void validate(const ArrivalSpec& spec, std::string_view field) {
  require_positive(spec.rate, field, "rate", " of requests/s");
  switch (spec.kind) {
    case ArrivalKind::kPoisson:
    case ArrivalKind::kConstant:
      break;
    case ArrivalKind::kPoissonQuantum:
      require_positive(spec.quantum_s, field, "quantum_s", " of seconds");
      if (spec.rate * spec.quantum_s < kMinQuantumMean) {
        throw SpecError(fmt::format("{}.quantum_s", field),
                        fmt::format("rate * quantum_s >= {} requests per quantum", kMinQuantumMean),
                        fmt::format("{}", spec.rate * spec.quantum_s));
      }
      break;
    case ArrivalKind::kGamma:
      require_positive(spec.cv, field, "cv", "");
      break;
    case ArrivalKind::kBurst:
      require_positive(spec.on_s, field, "on_s", " of seconds");
      if (!std::isfinite(spec.off_s) || spec.off_s < 0.0) {
        throw SpecError(fmt::format("{}.off_s", field), "a non-negative number of seconds",
                        fmt::format("{}", spec.off_s));
      }
      break;
  }
}

std::unique_ptr<ArrivalProcess> make_arrival_process(const ArrivalSpec& spec, std::uint64_t seed) {
  validate(spec);
  switch (spec.kind) {
    case ArrivalKind::kPoisson:
      return std::make_unique<PoissonArrivals>(spec.rate, seed);
    case ArrivalKind::kPoissonQuantum:
      return std::make_unique<PoissonQuantumArrivals>(spec.rate, spec.quantum_s, seed);
    case ArrivalKind::kGamma:
      return std::make_unique<GammaArrivals>(spec.rate, spec.cv, seed);
    case ArrivalKind::kConstant:
      return std::make_unique<ConstantArrivals>(spec.rate);
    case ArrivalKind::kBurst:
      return std::make_unique<BurstArrivals>(spec.rate, spec.on_s, spec.off_s, seed);
  }
  throw SpecError("arrival.process", "a known arrival process", "an invalid enum value");
}

void validate_artifact(const ArrivalSpec& spec, std::uint64_t seed, std::string_view field) {
  validate(spec, field);
  if (spec.kind != ArrivalKind::kPoissonQuantum) {
    throw SpecError(fmt::format("{}.kind", field),
                    "poisson_quantum (the only process of the vLLM artifact, rng: artifact)",
                    std::string(to_string(spec.kind)));
  }
  if (spec.rate * spec.quantum_s >= 10.0) {
    throw SpecError(fmt::format("{}.rate", field),
                    "rate * quantum_s < 10 requests per quantum with rng: artifact (NumPy's "
                    "Poisson method changes at 10 and is not reproduced)",
                    fmt::format("{}", spec.rate * spec.quantum_s));
  }
  if (seed > std::numeric_limits<std::uint32_t>::max()) {
    throw SpecError("seed", "a seed < 2^32 with rng: artifact (NumPy's legacy seeding)",
                    fmt::format("{}", seed));
  }
}

std::unique_ptr<ArrivalProcess> make_artifact_arrival_process(const ArrivalSpec& spec,
                                                              std::uint64_t seed,
                                                              std::string_view field) {
  validate_artifact(spec, seed, field);
  return std::make_unique<ArtifactPoissonQuantumArrivals>(spec.rate, spec.quantum_s,
                                                          static_cast<std::uint32_t>(seed));
}

std::string_view to_string(ArrivalKind kind) {
  for (const auto& [value, name] : kArrivalKindNames)
    if (value == kind) return name;
  return "?";
}

}  // namespace pagesim::traces

// ArrivalProcess: an endless, seeded sequence of request arrival times; ArrivalSpec, the plain
// settings struct a config is parsed into; make_arrival_process(), the factory.
//
// Kinds (rate in requests/s, times in seconds, every process starts at t = 0):
//   poisson          exponential gaps of mean 1/rate; the first arrival after one gap.
//   poisson_quantum  the vLLM artifact's process: time is cut into quanta of quantum_s; for
//                    quantum i a Poisson count of mean rate * quantum_s is drawn and that many
//                    requests arrive together at exactly i * quantum_s (first quantum at 0).
//   gamma            gamma-distributed gaps of mean 1/rate and coefficient of variation cv
//                    (cv = 1 is poisson; cv > 1 burstier, cv < 1 more regular).
//   constant         request i arrives at exactly i / rate (first at 0).
//   burst            on/off: a Poisson process of rate `rate` runs during on-periods of on_s
//                    seconds separated by silent off-periods of off_s seconds (first on-period
//                    starts at 0); the long-run mean rate is rate * on_s / (on_s + off_s).
// A process owns its random engine (std::mt19937_64, Boost.Random distributions), so the
// same spec and seed give the same times everywhere. Not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>


namespace pagesim::traces {

enum class ArrivalKind { kPoisson, kPoissonQuantum, kGamma, kConstant, kBurst };

inline constexpr std::array<std::pair<ArrivalKind, std::string_view>, 5> kArrivalKindNames = {{
    {ArrivalKind::kPoisson, "poisson"},
    {ArrivalKind::kPoissonQuantum, "poisson_quantum"},
    {ArrivalKind::kGamma, "gamma"},
    {ArrivalKind::kConstant, "constant"},
    {ArrivalKind::kBurst, "burst"},
}};

struct ArrivalSpec {
  ArrivalKind kind = ArrivalKind::kPoisson;
  // Requests per second, > 0. The long-run mean rate, except for burst: the rate during an
  // on-period.
  double rate = 1.0;
  // poisson_quantum: quantum length in seconds, > 0 (the vLLM artifact: 0.01). Shorter
  // quanta approach plain poisson; arrivals within a quantum are simultaneous.
  double quantum_s = 0.01;
  // gamma: coefficient of variation of the gaps (stddev / mean), > 0.
  double cv = 1.0;
  // burst: length of each on-period and of each off-period, seconds; on_s > 0, off_s >= 0.
  double on_s = 10.0;
  double off_s = 10.0;
};

class ArrivalProcess {
 public:
  ArrivalProcess() = default;
  virtual ~ArrivalProcess() = default;
  ArrivalProcess(const ArrivalProcess&) = delete;
  ArrivalProcess& operator=(const ArrivalProcess&) = delete;

  // The next arrival time in seconds: >= 0 and >= the previous one. Never ends.
  virtual double next() = 0;
  // E.g. "poisson_quantum(rate=4 req/s, quantum=0.01 s)".
  virtual std::string describe() const = 0;
};

// Throws SpecError naming `field`.<member> if a value the kind uses is out of range.
void validate(const ArrivalSpec& spec, std::string_view field = "arrival");

// A new process for `spec`, drawing from an engine seeded with `seed` (use derive_seed()).
// Throws SpecError (validate()).
std::unique_ptr<ArrivalProcess> make_arrival_process(const ArrivalSpec& spec, std::uint64_t seed);

// Throws SpecError (validate()), or naming `field`.kind, `field`.rate or seed, unless the
// kind is poisson_quantum, rate * quantum_s < 10 (NumPy's own method changes at 10) and
// seed < 2^32 (NumPy's legacy seeding): what make_artifact_arrival_process() accepts.
void validate_artifact(const ArrivalSpec& spec, std::uint64_t seed, std::string_view field = "arrival");

// The vLLM artifact's poisson_quantum process, bit for bit: the count of quantum i is
// NumPy's legacy poisson(rate * quantum_s) after np.random.seed(seed) (artifact_random.h).
// Throws SpecError (validate_artifact()).
std::unique_ptr<ArrivalProcess> make_artifact_arrival_process(const ArrivalSpec& spec,
                                                              std::uint64_t seed,
                                                              std::string_view field = "arrival");

// "poisson", "poisson_quantum", ...: the kind's name in kArrivalKindNames.
std::string_view to_string(ArrivalKind kind);

}  // namespace pagesim::traces

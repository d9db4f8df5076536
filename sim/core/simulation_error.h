// SimulationError: a run that cannot go on — a request that can never be scheduled, a run
// that stops making progress. Thrown by the engine and schedulers; the CLI reports it and
// exits non-zero. Broken internal invariants are not SimulationErrors (see
// Scheduler::validate).
#pragma once

#include <stdexcept>

namespace pagesim::sim {

class SimulationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace pagesim::sim

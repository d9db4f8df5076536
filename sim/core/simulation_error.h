// SimulationError: a run that cannot go on — a request that can never be scheduled, a run
// that stops making progress. Thrown by the engine and schedulers; the CLI reports it and
// exits non-zero. Broken internal invariants are not SimulationErrors (see
// Scheduler::validate).
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace pagesim::sim {

class SimulationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A request that can never be scheduled, with the config key whose value keeps it out
// ("scheduler.max_num_batched_tokens", "allocator.max_seq_len", "kv.slots", ...), so the
// experiment can report it at that key's line.
class UnschedulableRequest : public SimulationError {
 public:
  UnschedulableRequest(const std::string& message, std::string key)
      : SimulationError(message), key_(std::move(key)) {}
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

}  // namespace pagesim::sim

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
// ("scheduler.max_num_batched_tokens", "allocator.max_seq_len", "kv.slots", ...) and the
// replica whose value it is (-1: the cluster's, e.g. the smallest max_model_len), so the
// experiment can report it at that key's line with that replica's numbers.
class UnschedulableRequest : public SimulationError {
 public:
  UnschedulableRequest(const std::string& message, std::string key, int replica = 0)
      : SimulationError(message), key_(std::move(key)), replica_(replica) {}
  const std::string& key() const { return key_; }
  int replica() const { return replica_; }

 private:
  std::string key_;
  int replica_;
};

}  // namespace pagesim::sim

// Simulation: one run of a workload through a scheduler, its allocator and a cost model.
//
// A discrete-event loop on a virtual clock: an event is a request arrival or the end of a
// model iteration (one forward pass over a batch), never a token. When the GPU is free the
// scheduler plans the next iteration, the cost model prices it, and its end is scheduled;
// at its end the plan is applied (tokens generated, forks, finished requests freed).
// Requests are pulled from the source one arrival ahead, so a trace streams through in
// bounded memory. What a run measures is left to its IterationObservers (metrics, the
// batch sampler of kernel validation). Everything borrowed must outlive the Simulation; it
// owns the Requests in flight and its event queue. Runs are deterministic given the settings' seed. Not
// thread-safe; many Simulations may run in one process.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/beam/beam_model.h"
#include "sim/core/iteration_observer.h"
#include "sim/core/request.h"
#include "sim/cost/cost_model.h"
#include "sim/engine/event_queue.h"
#include "sim/scheduler/scheduler.h"
#include "traces/request_source.h"
#include "traces/workload_spec.h"

namespace pagesim::sim {

struct EngineSettings {
  std::uint64_t seed = 0;  // seeds the beam model
  BeamModelSettings beam;  // which beams survive a beam-search step (default: neutral)
  // A request that can never be scheduled: an UnschedulableRequest error, or dropped, or its
  // prompt truncated to fit (traces::OversizePolicy), counted in oversize_dropped() / _truncated().
  traces::OversizePolicy oversize = traces::OversizePolicy::kError;
  // Longest request (prompt + output tokens) the model serves; 0 = not checked. A longer
  // request is oversize (UnschedulableRequest key "max_model_len").
  std::int64_t max_model_len = 0;
};

// Called every few thousand iterations: virtual time, requests arrived, finished.
using ProgressFn = std::function<void(double sim_now_s, std::int64_t arrived, std::int64_t finished)>;

class Simulation {
 public:
  Simulation(traces::RequestSource& source, Scheduler& scheduler, const CostModel& cost,
             const EngineSettings& settings, std::unique_ptr<EventQueue> queue = nullptr);

  // Adds an observer (borrowed), called after those added before it. REQUIRES: run() has
  // not started.
  void add_observer(IterationObserver& observer) { observers_.push_back(&observer); }

  // Requests the oversize policy dropped or truncated so far (EngineSettings::oversize).
  std::int64_t oversize_dropped() const { return oversize_dropped_; }
  std::int64_t oversize_truncated() const { return oversize_truncated_; }
  // Requests so far that carried token identities (hash_ids) the prefix cache can key on.
  std::int64_t requests_with_token_ids() const { return requests_with_token_ids_; }

  // Runs until every request has arrived and finished. Throws SimulationError when a
  // request can never be scheduled or the run stops making progress, and whatever the
  // source throws on bad input (traces::TraceError).
  void run(const ProgressFn& progress = {});

  double now() const { return queue_->now(); }
  std::int64_t iterations() const { return iterations_; }

 private:
  void on_arrival();   // takes next_ in
  void on_arrivals();  // on_arrival for every request arriving now
  void start_iteration();
  void apply_plan(double end);
  void emit_token(Request* r, double t);
  bool read_next();  // reads the next request into next_; false at the end

  traces::RequestSource& source_;
  Scheduler& scheduler_;
  const CostModel& cost_;
  std::vector<IterationObserver*> observers_;
  std::unique_ptr<EventQueue> queue_;
  std::unique_ptr<BeamModel> beams_;
  std::int64_t hash_block_tokens_;
  std::int64_t prefix_block_size_ = 0;  // > 0 when the allocator caches prefixes

  std::optional<traces::TraceRequest> next_;  // the one request read ahead
  std::unordered_map<std::uint64_t, std::unique_ptr<Request>> live_;
  IterationPlan plan_;
  std::vector<Request*> finished_;
  std::vector<std::int32_t> parents_;
  bool busy_ = false;
  std::int64_t iterations_ = 0;
  std::int64_t preemptions_reported_ = 0;  // scheduler preemptions already in an IterationSample
  std::int64_t pending_swap_out_ = 0, pending_swap_in_ = 0;  // blocks moved by plans with no compute
  std::int64_t arrived_ = 0, finished_count_ = 0;
  traces::OversizePolicy oversize_;
  std::int64_t max_model_len_;
  std::int64_t oversize_dropped_ = 0, oversize_truncated_ = 0;
  std::int64_t requests_with_token_ids_ = 0;

  // Applies the oversize policy to r, which can never be scheduled as it is: false when r is
  // dropped; true when its prompt was cut so that it fits. Throws UnschedulableRequest under
  // kError.
  bool fit_oversize(Request& r, const traces::TraceRequest& t, const std::string& why, const std::string& key);
  void set_block_hashes(Request& r, const traces::TraceRequest& t) const;
  // True when r can ever run: within max_model_len and Scheduler::can_ever_schedule.
  // Otherwise *why says why and *key names the limiting config key.
  bool can_ever_run(const Request& r, std::string* why, std::string* key) const;
};

}  // namespace pagesim::sim

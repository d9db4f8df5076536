// Timeline: a run as a Chrome trace-event file (timeline.json) that Perfetto
// (ui.perfetto.dev, its trace processor) and chrome://tracing open.
//
// An IterationObserver that streams events to an std::ostream as the run goes, never
// holding the trace in memory: the JSON object {"displayTimeUnit": "ms", "traceEvents": [...]}
// (format: "Trace Event Format", Google, docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU).
// Times ("ts", "dur") are simulated microseconds. Each replica i is process pid = i + 1,
// named "replica i", holding:
//   - thread tid 1 "iterations": one complete slice ("ph": "X") per written iteration,
//     named "iteration", args index, batch_requests, batch_seqs, prefill_tokens,
//     decode_tokens, duration_ms;
//   - counter tracks ("ph": "C") sampled at each written iteration's start: "memory" (slots
//     of each memory class; the layer classes only in samples where one is non-zero),
//     "queues" (waiting, running, swapped requests) and, when the allocator caches prefixes,
//     "prefix" (cumulative prompt_tokens and hit_tokens of first admissions);
//   - request lanes: threads tid 2, 3, ... named "requests <k>" (k = tid - 2), a pool
//     shared by the replica's requests. A request takes the lowest lane free at its arrival
//     and keeps it to its finish, so a lane's slices never overlap and the process has as
//     many lanes as it ever had requests at once (not a track per request). On its lane a
//     request is one slice ("ph": "B"/"E", cat "request") "request <id>" from arrival to
//     finish (args prompt_tokens, output_tokens, n, beam_width, lane), holding consecutive
//     child slices named by phase: queued, prefill, decode, preempted (recompute: back in
//     the waiting queue), swapped (a phase that lasts no time, like the queueing of a request
//     batched on arrival, gets no slice). A phase changes only at an iteration of the request's
//     replica (or at its arrival / finish), except in disaggregated runs: at its first token
//     (first_token_s) the request leaves its prefill replica for transfer_queued (waiting
//     for room on a decode replica; often empty), then kv_transfer (transfer_start_s to
//     transfer_end_s), where its slice on the prefill replica ends and its lane there is
//     freed; a second "request <id>" slice on a lane of the decode replica's process goes
//     on from transfer_end_s to finish, starting in decode (preempted where forking to its
//     width fails there). The phases of a request's slices tile [arrival, finish] once.
//     (The decode replica's memory counters hold the KV from transfer_start_s.)
// Bounds (TimelineSettings): iterations are written every `stride`-th of each replica
// inside [start_s, end_s), requests arriving inside it; the window closes for good once
// `max_iterations` iteration slices are written (requests already in it are followed to
// their finish, so every "b" has its "e").
// Borrows the stream and the allocators (one per replica, for the prefix counters); they
// must outlive the writer. Not thread-safe; one writer per run.
#pragma once

#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

#include "allocator/kv_allocator.h"
#include "sim/core/iteration_observer.h"

namespace pagesim::sim {

struct TimelineSettings {
  // Every Nth iteration of each replica gets a slice and counter samples (>= 1). Request
  // phases are followed at every iteration regardless.
  std::int64_t stride = 1;
  // The window of simulated seconds written: iterations starting and requests arriving
  // inside [start_s, end_s).
  double start_s = 0;
  double end_s = std::numeric_limits<double>::infinity();
  // Once this many iteration slices are written (all replicas), the window ends there: the
  // default bound of a long run's file (0.5-0.6 KB per iteration with its counters, so 50-60 MB, plus
  // about 0.3 KB per request phase). 0: no bound.
  std::int64_t max_iterations = 100000;
};

class TimelineWriter : public IterationObserver {
 public:
  // Writes the header and the replicas' names. `allocators[i]` is replica i's.
  // REQUIRES: allocators non-empty, none null; settings.stride >= 1.
  TimelineWriter(const TimelineSettings& settings, std::ostream& out,
                 std::vector<const alloc::KvAllocator*> allocators);

  void on_arrival(const Request& r) override;
  void on_iteration(const IterationSample& s, const IterationPlan& plan) override;
  void on_replica_iteration(std::int32_t replica, const IterationSample& s, const IterationPlan& plan) override;
  void on_request_finished(const Request& r) override;
  void on_handed_off(const Request& r) override;
  void on_transfer_started(const Request& r, std::int32_t to) override;
  void on_transfer_ended(const Request& r) override;

  // Closes the slices of requests still open (a run that stopped early) at `now_s` and
  // the JSON document. REQUIRES: called once, after the run.
  void finish(double now_s);

  std::int64_t iterations_written() const { return iterations_written_; }

 private:
  enum class Phase { kQueued, kPrefill, kDecode, kPreempted, kSwapped, kTransferQueued, kKvTransfer };
  struct Followed {
    const Request* request = nullptr;  // the engine's, valid until the request finishes
    std::int32_t pid = 0;              // the replica it is on (arrival, then decode), + 1
    std::int32_t tid = 0;              // its lane on that replica, + kFirstLaneTid
    Phase phase = Phase::kQueued;
    double phase_start_s = 0;          // when `phase` began; its slice is written when it ends
    std::int64_t in_batch = -1;        // the engine-wide iteration stamp it was last batched at
  };

  static constexpr std::int32_t kFirstLaneTid = 2;  // tid 1 is the iterations thread
  static constexpr std::int64_t kBusy = -1;

  static const char* phase_name(Phase p);
  bool in_window(double t) const { return open_ && t >= settings_.start_s && t < settings_.end_s; }
  void begin_event();  // the separator before every event but the first
  void set_phase(Followed& f, Phase p, double t);
  // Writes f's current phase as a slice ending at t, unless it lasted no time: Perfetto's
  // trace processor orders an "E" before a "B" of the same instant, so an empty slice would
  // close before it opens and misnest the lane.
  void close_phase(const Followed& f, double t);
  // Takes a lane of process pid for r at t and writes the "B" of r's outer slice there;
  // f.pid and f.tid name the lane.
  void begin_request(Followed& f, const Request& r, std::int32_t pid, double t);
  // Writes the "E" of f's phase and outer slice at t and frees its lane from t.
  void end_request(const Followed& f, double t);
  // A "B" or "E" event of request `id`'s lane.
  void lane_event(char ph, const char* name, const Followed& f, const std::string& ts);
  // The followed request r, batched at least once; null when it is not followed.
  Followed* active(const Request& r);
  void write_iteration(std::int32_t replica, const IterationSample& s);

  TimelineSettings settings_;
  std::ostream& out_;
  std::vector<const alloc::KvAllocator*> allocators_;
  // lanes_[replica][k]: kBusy while a request holds lane k, else the time (ns) it was freed.
  // Invariant: a followed request holds exactly one busy lane, on its current replica.
  std::vector<std::vector<std::int64_t>> lanes_;
  // Requests in the window, by id: those never batched yet, and the rest (the only ones an
  // iteration scans, so a long waiting queue costs nothing per iteration).
  std::unordered_map<std::uint64_t, Followed> queued_;
  std::unordered_map<std::uint64_t, Followed> active_;
  std::int64_t stamp_ = 0;  // iterations seen, all replicas
  std::int64_t iterations_written_ = 0;
  bool open_ = true;        // false once max_iterations closed the window
  bool first_event_ = true;
};

}  // namespace pagesim::sim

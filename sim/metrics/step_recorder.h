// StepRecorder: the scheduler's decisions, step by step, as an engine logs them — the
// engine-parity record (steps.jsonl; experiments/engine_parity/FORMAT.md), which
// experiments/engine_parity/compare.py sets beside what vLLM's and SGLang's own schedulers
// decided on the same scenario.
//
// An IterationObserver that writes JSON lines to a stream: a header, then one line per
// iteration that scheduled tokens or preempted, holding
//   step        the replica's written steps, from 0
//   t           its start (s)
//   replica     only in runs of several replicas
//   scheduled   [[request id, tokens]] of every request given tokens (a prefill chunk's new
//               tokens; a decode: one per sequence, or 1 + the proposals of a speculative step)
//   new         [[request id, prefix-cache hit tokens]] of the requests admitted in the step
//               (first time or back from a recompute preemption)
//   preempted   [request id] in preemption order
//   finished    [request id] of the requests whose last token the step produced
//   free_blocks KvAllocator::available_blocks() after scheduling
//   blocks      [[request id, blocks of group 0, group 1, ...]] of every running request
//               after scheduling (KvAllocator::group_blocks, summed over a group's sequences),
//               and of every finished one whose memory is not back yet (asynchronous
//               scheduling: Simulation::retire_finished)
// Lists of pairs are sorted by request id. A step's line is written once its finished
// requests are known: at a later step of the replica or at finish().
// It reads the allocators of requests it holds at every step (O(live requests)) and no decode
// run may skip its iterations (decode_run_limit is 0): a record for checking decisions, not for
// long runs. Borrows the stream and the allocators (one per replica); they must outlive it.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <ostream>
#include <string>
#include <vector>

#include "allocator/kv_allocator.h"
#include "sim/core/iteration_observer.h"

namespace pagesim::sim {

struct StepRecordHeader {
  std::string scenario;        // the experiment's name
  std::string engine_version;  // pagesim's version (build_info.h)
};

class StepRecorder final : public IterationObserver {
 public:
  // Writes the header line. REQUIRES: allocators non-empty, none null.
  StepRecorder(const StepRecordHeader& header, std::ostream& out, std::vector<const alloc::KvAllocator*> allocators);

  std::int64_t decode_run_limit(std::int32_t, std::int64_t) const override { return 0; }
  void on_arrival(const Request& r) override;
  void on_replica_iteration(std::int32_t replica, const IterationSample& s, const IterationPlan& plan) override;
  void on_request_finished(const Request& r) override;
  // Writes the steps still held. Call once, after the run.
  void finish();

 private:
  struct Step {
    std::int32_t replica = 0;
    double end_s = 0;  // when its tokens come out
    std::string head;  // the line up to "finished"
    std::vector<std::uint64_t> finished;
    std::string tail;  // the line after "finished"
  };
  // Writes replica's held steps that ended before `now` (all when `all`).
  void flush(std::int32_t replica, double now, bool all);

  std::ostream& out_;
  std::vector<const alloc::KvAllocator*> allocators_;
  std::vector<std::int64_t> steps_;             // per replica: steps written or held
  std::vector<std::deque<Step>> held_;          // per replica, in step order
  std::vector<const Request*> live_;            // arrived, not finished
};

}  // namespace pagesim::sim

// AdvanceSettings: how a Simulation advances and where it keeps its waiting arrivals, never
// what it computes: every choice gives byte-identical outputs (docs/engine.md). It is the
// experiment's engine section as read (sim/config/experiment_config.h) and
// EngineSettings::advance as the engine takes it (sim/engine/simulation.h); it lives in
// sim/core, below both, as the config does not depend on the engine. A plain value.
#pragma once

#include <cstdint>

namespace pagesim::sim {

struct AdvanceSettings {
  // Advance runs of identical decode iterations without the scheduler and the allocator
  // (decode_run.h); false plans every iteration, for debugging and for checking that
  // skipping changes no output.
  bool skip_decode_runs = true;
  // Keep arrivals behind a queue longer than its policy reads (Scheduler::waiting_lookahead)
  // in a compact backlog (Replica::backlog), added to the queue as it shortens; false queues
  // every arrival as a Request at once.
  bool compact_waiting = true;
  // Backlog entries each replica holds in memory (about twice this many at most); the rest
  // wait, in order, in an anonymous temporary file in $TMPDIR (output/spill_queue.h). >= 0;
  // 0: all in memory. The default, 8192 (384 KiB of entries): a larger chunk only costs more
  // memory (and page faults) for the same sequential I/O.
  std::int64_t backlog_in_memory = 8192;
  bool operator==(const AdvanceSettings&) const = default;
};

}  // namespace pagesim::sim

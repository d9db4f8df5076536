// CostModel: how long the simulated GPU takes for one iteration and for a KV swap.
//
// The engine calls iteration_seconds once per iteration with the aggregate shape of the batch
// (batch_shape.h) and swap_seconds once per swap-in or swap-out. Recompute preemption has no
// cost of its own: the engine re-prefills the sequence, which iteration_seconds prices.
// Implementations are immutable after construction: every method is const, allocation-free
// on the per-iteration path, never throws, and is safe to call from several threads. A model
// may count what its lookups did (relaxed atomic counters) and report it through notes().
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "sim/cost/batch_shape.h"

namespace pagesim::sim {

// What a cost model reports about the iterations it priced, for the run's summary.json
// ("cost" object). Each list holds (operator name, count) in the model's fixed order.
struct CostNotes {
  std::vector<std::pair<std::string, std::int64_t>> lookups;               // table lookups
  std::vector<std::pair<std::string, std::int64_t>> extrapolated_lookups;  // outside the data
  // No notes: summary.json gets no "cost" object (every model but `operators`).
  bool empty() const { return lookups.empty() && extrapolated_lookups.empty(); }
  // Adds `other`'s counts to these by name (a name new here is appended), as a cluster sums
  // its replicas' notes.
  void merge(const CostNotes& other) {
    add(lookups, other.lookups);
    add(extrapolated_lookups, other.extrapolated_lookups);
  }

 private:
  static void add(std::vector<std::pair<std::string, std::int64_t>>& into,
                  const std::vector<std::pair<std::string, std::int64_t>>& from) {
    for (const auto& entry : from) {
      auto it = std::find_if(into.begin(), into.end(), [&](const auto& e) { return e.first == entry.first; });
      if (it == into.end()) into.push_back(entry);
      else it->second += entry.second;
    }
  }
};

// What decode_run_constant() computed once for a decode run (see CostModel): the terms summed
// before and after the one that varies. `varies` false: none computed, each iteration is
// priced whole.
struct DecodeRunConstant {
  bool varies = false;
  double before = 0;
  double after = 0;
};

class CostModel {
 public:
  virtual ~CostModel() = default;
  CostModel() = default;
  CostModel(const CostModel&) = delete;
  CostModel& operator=(const CostModel&) = delete;

  // Seconds of one forward pass over `batch`, >= 0; 0 for an empty batch (no pass runs).
  virtual double iteration_seconds(const BatchShape& batch) const = 0;

  // A decode run (sim/engine/decode_run.h) prices iterations whose batches differ only in
  // decode_context_tokens (every context one token longer each time). A model whose price is
  // (before + term(decode_context_tokens)) + after may compute `before` and `after` once, for
  // `batch`; decode_run_seconds(b, c) then equals iteration_seconds(b) bit for bit, for every
  // such b. The defaults price each iteration whole.
  virtual DecodeRunConstant decode_run_constant(const BatchShape& /*batch*/) const { return {}; }
  // REQUIRES: c from decode_run_constant(a) of a batch `a` that differs from `batch` at most in
  // decode_context_tokens.
  virtual double decode_run_seconds(const BatchShape& batch, const DecodeRunConstant& /*c*/) const {
    return iteration_seconds(batch);
  }
  // The next out.size() repeats of a decode run after `batch`, priced at once (a deferred run's
  // chunk, Simulation::defer_run): repeat i (from 0) has every context i + 1 tokens longer, and
  // out[i] = decode_run_seconds(its batch, c) + add_s, bit for bit. REQUIRES: as for
  // decode_run_seconds.
  virtual void decode_repeat_seconds(BatchShape batch, const DecodeRunConstant& c, double add_s,
                                     std::span<double> out) const {
    for (double& seconds : out) {
      batch.decode_context_tokens += batch.decode_seqs;
      seconds = decode_run_seconds(batch, c) + add_s;
    }
  }

  // Seconds to copy `blocks` KV blocks of `block_size` tokens (all layers) between GPU and CPU
  // memory, in one direction, >= 0; 0 when blocks == 0. REQUIRES: blocks >= 0, block_size >= 1.
  virtual double swap_seconds(std::int64_t blocks, std::int64_t block_size) const = 0;

  // One line naming the model and its settings, for logs and result files.
  virtual std::string describe() const = 0;

  // The counts kept over every iteration_seconds call so far; empty for models that keep
  // none. Safe to call while other threads price iterations (the counts are then a snapshot).
  virtual CostNotes notes() const { return {}; }
};

}  // namespace pagesim::sim

// ReplicaIterationRow: one row of iterations.csv in a run of several replicas — the replica
// that ran the iteration, then the IterationSample's own columns. Runs of one replica write
// IterationSample rows alone, so their files keep their bytes. Plain value.
#pragma once

#include <cstdint>
#include <tuple>

#include "sim/core/iteration_sample.h"
#include "sim/output/record_fields.h"

namespace pagesim::sim {

struct ReplicaIterationRow {
  std::int32_t replica = 0;  // index of the replica, from 0
  IterationSample sample;    // its index counts that replica's iterations
};

template <>
struct RecordFields<ReplicaIterationRow> {
  using R = ReplicaIterationRow;
  static constexpr auto fields = std::tuple{Field{"replica", &R::replica}, Field{"sample", &R::sample}};
};
static_assert(lists_every_member<ReplicaIterationRow>());

}  // namespace pagesim::sim

// SequenceObserver: told when a scheduler creates, forks or frees an allocator sequence.
//
// Used to follow each sequence's token lineage (which tokens it shares with which), e.g.
// by the batch sampler that feeds kernel validation. Calls happen after the allocator
// operation succeeded; `r` is the request the sequence belongs to. Observers must not call
// back into the scheduler.
#pragma once

#include "allocator/kv_allocator.h"
#include "sim/core/request.h"

namespace pagesim::sim {

class SequenceObserver {
 public:
  virtual ~SequenceObserver() = default;
  // `seq` was admitted holding r's prompt (plus, after a recompute, its generated tokens).
  virtual void on_admitted(const Request& r, alloc::SeqId seq) = 0;
  // `child` was forked from `parent`: it shares every token `parent` holds now.
  virtual void on_forked(const Request& r, alloc::SeqId parent, alloc::SeqId child) = 0;
  // `seq` was freed (finished, preempted by recompute, or a beam that did not survive).
  virtual void on_freed(alloc::SeqId seq) = 0;
};

}  // namespace pagesim::sim

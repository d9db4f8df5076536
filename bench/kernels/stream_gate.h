// StreamGate: holds a CUDA stream until the host releases it, so that host work enqueued
// meanwhile (argument checks, planning, launch overhead) runs while the device waits, and
// CUDA events recorded behind the gate time device work only.
//
// hold() enqueues a one-thread kernel that spins on a flag in mapped pinned memory; the
// host enqueues the timed work (start event, launches, stop event) and then release()s the
// flag. The spin gives up after a timeout so that a host that never releases (an exception
// between hold and release) cannot hang the device; timed_out() reports it. The same
// technique as NVIDIA nvbench's blocking kernel. One gate per stream; not thread-safe.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/cuda_host.h"

namespace pagesim::bench {

class StreamGate {
 public:
  // Throws KernelError when the pinned flag cannot be allocated.
  StreamGate();

  // Enqueues the spinning kernel on `stream`. REQUIRES: not held.
  void hold(cudaStream_t stream);
  // Lets the held stream run. REQUIRES: held; the stream is synchronised before the next
  // hold() or timed_out().
  void release();
  // True if the last hold gave up waiting before release() (the interval measured behind it
  // then includes host time). REQUIRES: the held stream was synchronised since release().
  bool timed_out() const;

 private:
  kernels::PinnedBuffer flag_;  // [0]: release flag (host writes 1); [1]: set by a timed-out spin
  bool held_ = false;
};

}  // namespace pagesim::bench

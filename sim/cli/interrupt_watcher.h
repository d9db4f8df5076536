// InterruptWatcher: turns SIGINT / SIGTERM into a request to stop that a run polls, so a
// stopped run unwinds normally — AtomicFile destructors remove its temporaries, the output
// folder's lock is released — and the command exits with 128 + the signal's number.
//
// No signal handler and no global state: the constructor blocks the two signals in the
// calling thread (threads started later inherit the mask) and starts a thread that takes
// them with sigwait() and records the first in this object. The run polls stop_requested()
// (the CLI does it from its progress callback, which the simulation calls every few
// thousand iterations, and before each sweep point) and throws Interrupted. A second
// signal, for a run stuck where it does not poll, ends the process at once with the signal's
// default action; its temporaries are then removed by the next run into that folder
// (remove_stale_temporaries). The destructor stops the thread and restores the mask.
// REQUIRES: constructed before any other thread of the process is started, and at most one
// at a time (a process has one signal mask to share). stop_requested() is safe from any thread.
#pragma once

#include <signal.h>

#include <atomic>
#include <stdexcept>
#include <thread>

namespace pagesim::sim::cli {

// A run stopped by a signal. signal(): its number; the exit status is 128 + it.
class Interrupted : public std::runtime_error {
 public:
  explicit Interrupted(int signal);
  int signal() const { return signal_; }
  int exit_status() const { return 128 + signal_; }

 private:
  int signal_;
};

class InterruptWatcher {
 public:
  InterruptWatcher();
  ~InterruptWatcher();
  InterruptWatcher(const InterruptWatcher&) = delete;
  InterruptWatcher& operator=(const InterruptWatcher&) = delete;

  // The first signal received (SIGINT or SIGTERM), or 0.
  int stop_requested() const { return signal_.load(std::memory_order_relaxed); }
  // Throws Interrupted if a signal was received.
  void throw_if_stopped() const;

 private:
  void watch();

  sigset_t signals_{};
  sigset_t old_mask_{};
  std::atomic<int> signal_{0};
  std::atomic<bool> closing_{false};
  std::thread thread_;
};

}  // namespace pagesim::sim::cli

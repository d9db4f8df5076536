#include "sim/cli/interrupt_watcher.h"

#include <pthread.h>

#include <cstdio>
#include <string>

namespace pagesim::sim::cli {
namespace {

const char* signal_name(int s) { return s == SIGINT ? "SIGINT" : s == SIGTERM ? "SIGTERM" : "a signal"; }

}  // namespace

Interrupted::Interrupted(int signal) : std::runtime_error(std::string("stopped by ") + signal_name(signal)), signal_(signal) {}

InterruptWatcher::InterruptWatcher() {
  sigemptyset(&signals_);
  sigaddset(&signals_, SIGINT);
  sigaddset(&signals_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals_, &old_mask_);
  thread_ = std::thread([this] { watch(); });
}

InterruptWatcher::~InterruptWatcher() {
  closing_.store(true);
  // Wakes the watcher's sigwait(); it sees closing_ and returns without recording.
  pthread_kill(thread_.native_handle(), SIGTERM);
  thread_.join();
  pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

void InterruptWatcher::throw_if_stopped() const {
  if (const int s = stop_requested()) throw Interrupted(s);
}

void InterruptWatcher::watch() {
  for (;;) {
    int s = 0;
    if (sigwait(&signals_, &s) != 0) continue;
    if (closing_.load()) return;
    int none = 0;
    if (signal_.compare_exchange_strong(none, s)) {
      std::fprintf(stderr, "\npagesim: %s received: stopping and removing temporary files (again to quit at once)\n",
                   signal_name(s));
      continue;
    }
    // The second signal: die of it now, as if it had never been blocked.
    ::signal(s, SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, s);
    pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
    ::raise(s);
  }
}

}  // namespace pagesim::sim::cli

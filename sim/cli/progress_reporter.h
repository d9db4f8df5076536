// ProgressReporter: how far a `pagesim run` is, on stderr — never on stdout, whose table
// scripts compare. On a terminal, one line redrawn in place at most 10 times a second: a bar,
// the percentage, the ETA, and the point and simulated time; elsewhere (a log file, CI), a
// plain line every `log_every_s` seconds of wall time. Quiet runs report nothing.
//
// A point's fraction done is its simulated time over its workload's horizon
// (workload.duration_s), or its arrived requests over workload.max_requests; a point
// without either (a trace replayed to its end) reports counts only. A sweep's fraction is
// the mean over its points. The ETA is the wall time so far times (1 - f) / f.
// The callbacks it makes share one state: the caller serialises them (run_experiment_file
// does, for jobs > 1). The reporter must outlive them.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "sim/experiment/experiment.h"

namespace pagesim::sim::cli {

// What one report says; progress_line() writes it.
struct ProgressState {
  double fraction = -1;      // of the whole run, in [0, 1]; < 0: unknown
  double wall_s = 0;         // since the run started
  std::size_t point = 0;     // the point reporting, from 0
  std::size_t points = 1;
  std::string label;         // the point's label; empty without sweep
  double sim_now_s = 0;
  std::int64_t arrived = 0, finished = 0;
};

// The report as one line (no newline): with `bar`, a 24-cell bar first.
std::string progress_line(const ProgressState& s, bool bar);

class ProgressReporter {
 public:
  // `horizons_s[i]`: point i's expected simulated seconds, or -(max requests) when only a
  // request count bounds it, or 0 when nothing does. `terminal`: redraw in place.
  ProgressReporter(std::vector<double> horizons_s, bool terminal, double log_every_s, std::FILE* out = stderr);

  // The callback for point `index` of `count` (run_experiment_file's ProgressFactory).
  ProgressFn for_point(const std::string& label, std::size_t index, std::size_t count);
  // Clears the terminal line (call before printing anything else).
  void clear();

 private:
  void report(const std::string& label, std::size_t index, std::size_t count, double sim_now, std::int64_t arrived,
              std::int64_t finished);

  std::vector<double> horizons_s_;
  std::vector<double> fractions_;  // per point
  bool terminal_;
  double log_every_s_;
  std::FILE* out_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  double last_print_s_ = -1e9;
  bool drawn_ = false;
};

}  // namespace pagesim::sim::cli

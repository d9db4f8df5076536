#include "sim/cli/progress_reporter.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace pagesim::sim::cli {
namespace {

std::string duration_text(double s) {
  if (s < 90) return fmt::format("{:.0f} s", s);
  if (s < 5400) return fmt::format("{:.0f} min", s / 60);
  return fmt::format("{:.1f} h", s / 3600);
}

}  // namespace

std::string progress_line(const ProgressState& s, bool bar) {
  std::string line;
  if (s.fraction >= 0) {
    const double f = std::clamp(s.fraction, 0.0, 1.0);
    if (bar) {
      constexpr int kCells = 24;
      const int full = static_cast<int>(f * kCells);
      line += "[" + std::string(static_cast<std::size_t>(full), '#') +
              std::string(static_cast<std::size_t>(kCells - full), '.') + "] ";
    }
    line += fmt::format("{:3.0f}%", 100 * f);
    if (f > 0 && f < 1) line += ", ETA " + duration_text(s.wall_s * (1 - f) / f);
    line += "; ";
  }
  if (s.points > 1) line += fmt::format("point {}/{} {}: ", s.point + 1, s.points, s.label);
  line += fmt::format("t = {:.1f} s simulated, {} requests arrived, {} finished, {} wall", s.sim_now_s, s.arrived,
                      s.finished, duration_text(s.wall_s));
  return line;
}

ProgressReporter::ProgressReporter(std::vector<double> horizons_s, bool terminal, double log_every_s, std::FILE* out)
    : horizons_s_(std::move(horizons_s)),
      fractions_(horizons_s_.size(), 0.0),
      terminal_(terminal),
      log_every_s_(log_every_s),
      out_(out) {}

ProgressFn ProgressReporter::for_point(const std::string& label, std::size_t index, std::size_t count) {
  return [this, label, index, count](double sim_now, std::int64_t arrived, std::int64_t finished) {
    report(label, index, count, sim_now, arrived, finished);
  };
}

void ProgressReporter::report(const std::string& label, std::size_t index, std::size_t count, double sim_now,
                              std::int64_t arrived, std::int64_t finished) {
  bool known = index < horizons_s_.size();
  if (known) {
    const double h = horizons_s_[index];
    if (h > 0) fractions_[index] = std::min(1.0, sim_now / h);
    else if (h < 0) fractions_[index] = std::min(1.0, static_cast<double>(arrived) / -h);
    for (double h2 : horizons_s_) known &= h2 != 0;
  }
  ProgressState s;
  s.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (known) {
    double sum = 0;
    for (double f : fractions_) sum += f;
    s.fraction = sum / static_cast<double>(fractions_.size());
  }
  s.point = index;
  s.points = count;
  s.label = label;
  s.sim_now_s = sim_now;
  s.arrived = arrived;
  s.finished = finished;
  if (terminal_) {
    if (s.wall_s < 0.5 || s.wall_s - last_print_s_ < 0.1) return;  // short runs draw nothing
    fmt::print(out_, "\r\033[K{}", progress_line(s, true));
    drawn_ = true;
  } else {
    if (s.wall_s - last_print_s_ < log_every_s_ || s.wall_s < log_every_s_) return;
    fmt::print(out_, "pagesim: {}\n", progress_line(s, false));
  }
  last_print_s_ = s.wall_s;
  std::fflush(out_);
}

void ProgressReporter::clear() {
  if (!drawn_) return;
  fmt::print(out_, "\r\033[K");
  std::fflush(out_);
  drawn_ = false;
}

}  // namespace pagesim::sim::cli

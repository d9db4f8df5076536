// Simulator speed: runs each experiment config given (default: experiments/bench/*.yaml)
// in its own child process and prints one table row per config — requests, iterations,
// simulated seconds, wall seconds, simulated seconds per wall second, iterations per wall
// second, peak RSS. Outputs go to a temporary folder that is removed afterwards.
// Budgets the configs are held to (wall s on one core, e.g. under `taskset -c 0`):
//   azure_conv_10_replicas.yaml  <= 2 s  (issue 14: the whole Azure conversation trace on a
//                                         cluster of 10 replicas behind a router)
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sim/experiment/experiment.h"

namespace {

int run_one(const std::string& config) {
  namespace fs = std::filesystem;
  const fs::path out = fs::temp_directory_path() / fmt::format("pagesim-bench-{}", getpid());
  try {
    const auto t0 = std::chrono::steady_clock::now();
    auto results = pagesim::sim::run_experiment_file(config, {}, out);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto& s = results.front().summary;
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    fmt::print("{:<36} {:>9} {:>10} {:>11.0f} {:>8.2f} {:>12.0f} {:>12.0f} {:>9.0f}\n",
               fs::path(config).filename().string(), s.requests_finished, s.iterations, s.sim_time_s, wall,
               s.sim_time_s / wall, static_cast<double>(s.iterations) / wall,
               static_cast<double>(ru.ru_maxrss) / 1024.0);
    std::fflush(stdout);
    fs::remove_all(out);
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "sim_bench: {}: {}\n", config, e.what());
    fs::remove_all(out);
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> configs(argv + 1, argv + argc);
  if (configs.empty()) {
    for (const auto& e : std::filesystem::directory_iterator(PAGESIM_SOURCE_DIR "/experiments/bench"))
      if (e.path().extension() == ".yaml") configs.push_back(e.path().string());
    std::sort(configs.begin(), configs.end());
  }
  fmt::print("{:<36} {:>9} {:>10} {:>11} {:>8} {:>12} {:>12} {:>9}\n", "config", "requests", "iterations",
             "sim s", "wall s", "sim-s/wall-s", "iter/wall-s", "RSS MB");
  std::fflush(stdout);
  int failures = 0;
  for (const auto& c : configs) {
    const pid_t pid = fork();
    if (pid == 0) _exit(run_one(c));  // own process: peak RSS is this run's alone
    int status = 0;
    waitpid(pid, &status, 0);
    failures += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  return failures == 0 ? 0 : 1;
}

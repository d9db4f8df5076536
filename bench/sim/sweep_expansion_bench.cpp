// Sweep expansion speed: generates experiments with 100,000-point sweeps (a grid of five
// axes, one axis of 100,000 values, cases crossed with a grid) and times, each in its own
// child process so that its peak RSS is its own:
//   expand    Sweep::from_text: the points exist (count, labels on demand)
//   labels    + every point's label and assignments (what sweep.csv needs)
//   roots     + every point's YAML tree (the file re-read without its sweep, values set)
//   parse     + every point's config (parse_experiment of its YAML)
//   build     + build_run of every point: what `pagesim run` does before the first point runs
// and prints one table row per (sweep, stage): points, wall seconds, peak RSS in MiB.
//   sweep_expansion_bench [points]   (default 100000; a multiple of 10^5 keeps every shape exact)
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sim/config/sweep.h"
#include "sim/experiment/experiment.h"

namespace {

using pagesim::sim::Sweep;

const char* const kBase =
    "name: sweep-bench\n"
    "workload:\n"
    "  kind: synthetic\n"
    "  arrival: {kind: poisson, rate: 2}\n"
    "  max_requests: 10\n"
    "model: opt-13b\n"
    "gpu: a100-40gb\n"
    "allocator: {kind: paged, block_size: 16}\n"
    "scheduler: {kind: vllm}\n";

// "[first, first + 1, ..., first + n - 1]"
std::string values(std::size_t n, std::size_t first) {
  std::string s = "[";
  for (std::size_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(first + i);
  return s + "]";
}

struct Shape {
  std::string name;
  std::string yaml;
};

// Three sweeps of `points` points each. REQUIRES: points is a multiple of 10^5 (grid) and of
// 10 (cases).
std::vector<Shape> shapes(std::size_t points) {
  std::vector<Shape> out;
  const std::size_t per_axis_last = points / 10'000;  // 10 x 10 x 10 x 10 x (points / 10^4)
  out.push_back({"grid 10x10x10x10x" + std::to_string(per_axis_last),
                 std::string(kBase) + "sweep:\n  seed: " + values(10, 0) +
                     "\n  scheduler.max_num_seqs: " + values(10, 64) +
                     "\n  workload.max_requests: " + values(10, 5) +
                     "\n  scheduler.max_num_batched_tokens: " + values(10, 2560) +
                     "\n  allocator.max_seq_len: " + values(per_axis_last, 2048) + "\n"});
  out.push_back({"one axis of " + std::to_string(points),
                 std::string(kBase) + "sweep:\n  seed: " + values(points, 0) + "\n"});
  std::string cases = std::string(kBase) + "sweep:\n  cases:\n";
  for (int c = 0; c < 10; ++c)
    cases += fmt::format("    - {{label: c{}, scheduler.max_num_seqs: {}, workload.arrival: {{kind: poisson, rate: {}}}}}\n",
                         c, 64 + c, c + 1);
  cases += "  seed: " + values(points / 10, 0) + "\n";
  out.push_back({"10 cases x axis of " + std::to_string(points / 10), cases});
  return out;
}

enum class Stage { kExpand, kLabels, kRoots, kParse, kBuild };
const char* const kStageNames[] = {"expand", "labels", "roots", "parse", "build"};

// In the child: runs `stage` on `yaml`, prints the row, returns the exit status.
int measure(const Shape& shape, Stage stage) {
  const auto t0 = std::chrono::steady_clock::now();
  std::size_t n = 0, chars = 0;
  try {
    const Sweep sweep = Sweep::from_text(shape.yaml, "sweep-bench.yaml");
    n = sweep.size();
    for (std::size_t i = 0; stage != Stage::kExpand && i < n; ++i) {
      if (stage == Stage::kLabels) {
        chars += sweep.label(i).size();
        for (const auto& [k, v] : sweep.assignments(i)) chars += k.size() + v.size();
      } else if (stage == Stage::kRoots) {
        chars += sweep.root(i).size();
      } else if (stage == Stage::kParse) {
        chars += sweep.config(i).name.size();
      } else {
        chars += pagesim::sim::build_run(sweep.config(i)).allocator->name().size();
      }
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "sweep_expansion_bench: {}: {}\n", shape.name, e.what());
    return 1;
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  fmt::print("{:<34} {:<7} {:>9} {:>9.3f} {:>13.1f}\n", shape.name, kStageNames[static_cast<int>(stage)], n, wall,
             static_cast<double>(ru.ru_maxrss) / 1024.0);
  std::fflush(stdout);
  return chars > 0 || stage == Stage::kExpand ? 0 : 1;  // `chars` keeps the work from being optimised away
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t points = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 100'000;
  if (points == 0 || points % 100'000 != 0) {
    fmt::print(stderr, "usage: sweep_expansion_bench [points, a multiple of 100000]\n");
    return 2;
  }
  fmt::print("{:<34} {:<7} {:>9} {:>9} {:>13}\n", "sweep", "stage", "points", "wall_s", "peak_rss_mib");
  std::fflush(stdout);
  int failures = 0;
  for (const Shape& shape : shapes(points))
    for (Stage stage : {Stage::kExpand, Stage::kLabels, Stage::kRoots, Stage::kParse, Stage::kBuild}) {
      const pid_t pid = fork();
      if (pid == 0) _exit(measure(shape, stage));
      int status = 0;
      waitpid(pid, &status, 0);
      failures += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
  return failures == 0 ? 0 : 1;
}

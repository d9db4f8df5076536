// Fuzzes experiment building (sim/experiment build_run()): presets, KV capacity derivation,
// CPU swap blocks, allocator, scheduler, cost model and workload construction from a parsed
// config, for the file or each of its first sweep points. Input layout: experiment_input.h.
//
// Files a config names are replaced by small fixtures of the repository (tests/traces/data,
// tests/sim/data), keeping the format the config asks for: what the readers do with a
// file's content is fuzzed by the reader harnesses, and an input must not reach arbitrary
// files of the host (/dev/zero never ends). Configs whose pools would take more host memory
// than a fuzzing process has are skipped: an allocator's bookkeeping grows with the pool it
// is asked for, by design (bounding kv.slots up front is the config's job, not this one's).
//
// The only accepted failures are ConfigError (naming file, line and key) and TraceError (a
// fixture in the wrong format). A config that builds must give a usable run.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <variant>

#include "experiment_input.h"
#include "scratch_file.h"
#include "sim/config/config_error.h"
#include "sim/config/experiment_config.h"
#include "sim/config/sweep.h"
#include "sim/cost/kv_capacity.h"
#include "sim/cost/presets.h"
#include "sim/experiment/experiment.h"
#include "traces/trace_error.h"

namespace {

using namespace pagesim;

constexpr std::size_t kMaxPoints = 4;
// 8M blocks (block_size 1 on an H200) take 3.5 s to build under ASan, a third of the 10 s that
// counts as a hang; 2^20 blocks, an eighth of that.
constexpr std::int64_t kMaxBlocks = std::int64_t{1} << 20;
constexpr double kMaxCpuSwapGib = 64;

std::string fixture(const char* name) { return std::string(PAGESIM_SOURCE_DIR) + "/" + name; }

// The pool's size in blocks, as build_run() derives it (kv.slots, or GPU memory when 0, here
// without the activation reserve: an upper bound);
// 0 when the derivation fails (build_run reports that).
std::int64_t pool_blocks(const sim::ExperimentConfig& c) {
  const std::int64_t block = c.allocator.block_size > 0 ? c.allocator.block_size : 1;
  if (c.kv.slots > 0) return c.kv.slots / block;
  try {
    sim::KvCapacitySettings ks;
    ks.gpu_memory_utilization = c.kv.gpu_memory_utilization;
    ks.block_size = block;
    return sim::kv_capacity(sim::model_preset(c.model), sim::gpu_preset(c.gpu), c.tensor_parallel, ks).blocks;
  } catch (const std::exception&) {
    return 0;
  }
}

// False for configs skipped for their host-memory footprint (see the file comment).
bool fits_in_memory(const sim::ExperimentConfig& c) {
  if (pool_blocks(c) > kMaxBlocks) return false;
  const double swap = c.allocator.cpu_swap_gib;
  // Out-of-range values (NaN, inf, 1e30) are kept: build_run must reject them by key.
  if (std::isfinite(swap) && swap > kMaxCpuSwapGib && swap < 1e15) return false;
  return true;
}

[[noreturn]] void fail(const char* what, const sim::ExperimentConfig& c) {
  YAML::Emitter e;
  e << sim::to_yaml(c);
  std::fprintf(stderr, "build_run gave %s for:\n%s\n", what, e.c_str());
  std::abort();
}

void build(sim::ExperimentConfig c) {
  if (!fits_in_memory(c)) return;
  if (!c.workload.trace.path.empty()) {
    const traces::TraceFormat f = c.workload.trace.format;
    c.workload.trace.path = fixture(f == traces::TraceFormat::kMooncake    ? "tests/traces/data/mooncake_small.jsonl"
                                    : f == traces::TraceFormat::kVllmBench ? "tests/traces/data/vllm_bench_concurrency.json"
                                    : f == traces::TraceFormat::kInferencePerfRequests
                                        ? "tests/traces/data/inference_perf_requests_small.json"
                                        : "tests/traces/data/native_small.csv");
  }
  if (!c.workload.lengths.path.empty()) c.workload.lengths.path = fixture("tests/traces/data/lengths_small.csv");
  if (auto* p = std::get_if<sim::ProfileCostSettings>(&c.cost); p && !p->profile.empty())
    p->profile = fixture("tests/sim/data/cost_profile_example.csv");
  try {
    sim::Run run = sim::build_run(c);
    if (!run.source || !run.allocator || !run.scheduler || !run.cost || run.kv_slots <= 0)
      fail("an incomplete run", c);
    // The pool is the one asked for: its block size (paged, buddy; other placements report 1)
    // and no more slots than the capacity; a pool of slots holds exactly the kv_slots the run
    // reports (kv.slots rounded down to whole blocks where it is made of them).
    const bool blocks = c.allocator.kind == alloc::AllocatorKind::kPaged ||
                        c.allocator.contiguous.placement == alloc::PlacementKind::kBuddy;
    if (run.allocator->block_size() != (blocks ? c.allocator.block_size : 1)) fail("another block size", c);
    if (run.allocator->capacity_slots() < 1 || run.allocator->capacity_slots() > run.kv_slots)
      fail("a capacity outside [1, kv_slots]", c);
    if (!alloc::is_layer_group_kind(c.allocator.kind) && run.allocator->capacity_slots() != run.kv_slots)
      fail("a pool of other than kv_slots slots", c);
  } catch (const sim::ConfigError& e) {
    fuzz::explain(e);
  } catch (const traces::TraceError& e) {
    fuzz::explain(e);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fuzz::ExperimentInput input = fuzz::split_experiment_input(fuzz::as_text(data, size));
  fuzz::ScratchFile file(input.yaml, ".yaml");
  try {
    const sim::Sweep sweep = sim::Sweep::from_file(file.path(), input.overrides);
    // Points are made on demand: only the first kMaxPoints of a large sweep are built.
    const std::size_t n = std::min<std::size_t>(sweep.size(), kMaxPoints);
    for (std::size_t i = 0; i < n; ++i) build(sweep.config(i));
  } catch (const sim::ConfigError& e) {
    fuzz::explain(e);
  }
  return 0;
}

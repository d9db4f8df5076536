#include "sim/experiment/experiment.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "allocator/make_allocator.h"
#include "allocator/paged/paged_allocator.h"
#include "sim/config/config_error.h"
#include "sim/config/sweep.h"
#include "sim/cost/cost_error.h"
#include "sim/cost/kv_capacity.h"
#include "sim/cost/presets.h"
#include "sim/experiment/result_folder.h"
#include "sim/metrics/metrics.h"
#include "sim/output/atomic_file.h"
#include "sim/output/created_folder.h"
#include "sim/validate/batch_sampler.h"
#include "traces/make_source.h"
#include "traces/trace_error.h"

namespace pagesim::sim {
namespace {

// Runs `build`, turning a component's own error into a ConfigError on `key` (or, for a
// workload spec's error, on the field it names: workload.arrival.rate, ...) at the line the
// config's origin recorded for it.
template <class F>
auto in_section(const ConfigOrigin& origin, const std::string& key, F&& build) {
  try {
    return build();
  } catch (const ConfigError&) {
    throw;
  } catch (const traces::TraceError&) {
    throw;  // names the trace file and line itself
  } catch (const traces::SpecError& e) {
    // The workload's seed is the experiment's top-level `seed` (parse_experiment copies it).
    const std::string path = key == "workload" && e.field() == "seed" ? "seed" : key + "." + e.field();
    std::string message = e.what();
    if (message.rfind(e.field() + ": ", 0) == 0) message.erase(0, e.field().size() + 2);
    throw origin.error(path, message);
  } catch (const std::exception& e) {
    throw origin.error(key, e.what());
  }
}

std::string point_folder(std::size_t index, const std::string& label) {
  std::string safe;
  for (char ch : label) safe += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '-' || ch == '=' || ch == '_') ? ch : '_';
  return fmt::format("{:02}-{}", index, safe);
}

// config.resolved.yaml's text; --resume compares it byte for byte with a kept point's.
std::string resolved_config_text(const ExperimentConfig& c) {
  YAML::Emitter resolved;
  resolved << to_yaml(c);
  return std::string(resolved.c_str()) + "\n";
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

Run build_run(const ExperimentConfig& c) {
  const ConfigOrigin& origin = c.origin;
  Run run;
  run.model = in_section(origin, "model", [&] { return model_preset(c.model); });
  run.gpu = in_section(origin, "gpu", [&] { return gpu_preset(c.gpu); });
  if (c.cost.compute_efficiency >= 0) run.gpu.compute_efficiency = c.cost.compute_efficiency;
  if (c.cost.memory_efficiency >= 0) run.gpu.memory_efficiency = c.cost.memory_efficiency;
  if (c.cost.iteration_overhead_s >= 0) run.gpu.iteration_overhead_seconds = c.cost.iteration_overhead_s;

  run.kv_slots = c.kv.slots;
  if (run.kv_slots == 0) {
    run.kv_slots = in_section(origin, "kv", [&] {
      KvCapacitySettings ks;
      ks.gpu_memory_utilization = c.kv.gpu_memory_utilization;
      ks.activation_reserve_bytes = static_cast<std::int64_t>(c.kv.activation_reserve_gib * std::pow(2.0, 30));
      ks.block_size = c.allocator.block_size;
      return kv_capacity(run.model, run.gpu, c.tensor_parallel, ks).slots;
    });
  }

  alloc::AllocatorSpec as = c.allocator;
  as.capacity_slots = run.kv_slots;
  const double kv_bytes_per_block = static_cast<double>(run.model.kv_bytes_per_token_per_gpu(c.tensor_parallel)) *
                                    static_cast<double>(c.allocator.block_size);
  as.cpu_blocks = static_cast<std::int64_t>(c.allocator.cpu_swap_gib * std::pow(2.0, 30) / kv_bytes_per_block);
  const bool paged = c.allocator.kind == alloc::AllocatorKind::kPaged;
  bool beams = false;
  for (const auto& s : c.workload.sampling) beams |= s.beam_width > 1;
  if (beams && !paged)
    throw origin.error("allocator.kind", "beam search (workload.sampling beam_width > 1) needs the paged allocator");
  // Policies that drive a paged pool's own operations get the PagedAllocator itself.
  if (traits_of(c.scheduler.kind).needs_paged_allocator) {
    if (!paged)
      throw origin.error("allocator.kind", fmt::format("scheduler.kind '{}' needs the paged allocator, found '{}'",
                                                       to_string(c.scheduler.kind),
                                                       alloc::to_string(c.allocator.kind)));
    auto paged_allocator = in_section(origin, "allocator", [&] { return alloc::make_paged_allocator(as); });
    run.scheduler = in_section(origin, "scheduler", [&] { return make_scheduler(c.scheduler, *paged_allocator); });
    run.allocator = std::move(paged_allocator);
  } else {
    run.allocator = in_section(origin, "allocator", [&] { return alloc::make_allocator(as); });
    run.scheduler = in_section(origin, "scheduler", [&] { return make_scheduler(c.scheduler, *run.allocator); });
  }

  CostModelSpec cs;
  cs.kind = c.cost.kind;
  cs.model = run.model;
  cs.gpu = run.gpu;
  cs.tp = c.tensor_parallel;
  cs.constant = c.cost.constant;
  cs.profile_path = c.cost.profile;
  run.cost = in_section(origin, "cost", [&] { return make_cost_model(cs); });
  run.source = in_section(origin, "workload", [&] { return traces::make_source(c.workload); });
  return run;
}

Summary run_experiment(const ExperimentConfig& c, const std::filesystem::path& out, const ProgressFn& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  Run run = build_run(c);
  CreatedFolder folder(out);  // a point that fails leaves no empty folder

  // Disabled outputs are not written at all (rather than left empty).
  std::optional<AtomicFile> requests, iterations;
  if (c.output.requests_csv) requests.emplace(out / "requests.csv");
  if (c.output.iterations_stride > 0) iterations.emplace(out / "iterations.csv");
  MetricsSettings ms;
  ms.window_start_s = c.measure.window_start_s;
  ms.window_end_s = c.measure.window_end_s;
  ms.iterations_stride = c.output.iterations_stride;
  ms.kv_bytes_per_token = static_cast<double>(run.model.kv_bytes_per_token());
  ms.block_size = run.allocator->block_size();
  Metrics metrics(ms, requests ? &requests->stream() : nullptr, iterations ? &iterations->stream() : nullptr);

  EngineSettings es;
  es.seed = c.seed;
  es.beam = c.beam;
  Simulation simulation(*run.source, *run.scheduler, *run.cost, es);
  simulation.add_observer(metrics);
  std::unique_ptr<BatchSampler> sampler;
  if (c.validate.every_n_iterations > 0) {
    sampler = std::make_unique<BatchSampler>(
        BatchSamplerSettings{c.validate.every_n_iterations, c.validate.max_batches}, *run.allocator,
        out / "batches.jsonl", c.name);
    run.scheduler->set_observer(sampler.get());
    simulation.add_observer(*sampler);
  }
  simulation.run(progress);
  if (sampler) sampler->finish();

  const double hit_rate = run.allocator->stats().prefix.hit_rate();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  Summary s = metrics.finish(simulation.now(), wall, hit_rate);

  if (requests) requests->commit();
  if (iterations) iterations->commit();
  write_file_atomically(out / "config.resolved.yaml", resolved_config_text(c));
  nlohmann::ordered_json j;
  j["name"] = c.name;
  j["allocator"] = run.allocator->name();
  j["scheduler"] = std::string(to_string(c.scheduler.kind));
  j["cost_model"] = run.cost->describe();
  j["workload"] = run.source->describe();
  j["kv_slots"] = run.kv_slots;
  const nlohmann::ordered_json fields = s.to_json();
  for (const auto& [k, v] : fields.items()) j[k] = v;
  write_file_atomically(out / "summary.json", j.dump(2) + "\n");  // last: its presence means complete
  folder.keep();
  return s;
}

namespace {

// ---- Sweeps ----

// Parses and builds every point (allocator, scheduler, cost model, capacity, workload
// source), so that a bad point fails, named with its values, before any point runs.
void check_sweep_points(const Sweep& sweep) {
  for (std::size_t i = 0; i < sweep.size(); ++i) {
    try {
      build_run(sweep.config(i));
    } catch (const ConfigError& e) {
      throw sweep.in_point(i, e);
    }
  }
}

// Runs every point not `kept` (--resume) on `jobs` threads; each point is its own simulation, its config made
// under `yaml` (yaml-cpp nodes cannot be read concurrently). With several jobs the progress
// callbacks are serialised. After a failure no new point starts; the first failing point's
// error (by index) is rethrown once the running ones are done.
std::vector<PointResult> run_sweep_points(const Sweep& sweep, const std::filesystem::path& out,
                                          const ProgressFactory& progress, std::size_t jobs,
                                          const std::vector<std::optional<Summary>>& kept) {
  const std::size_t n = sweep.size();
  std::vector<PointResult> results(n);
  std::vector<std::exception_ptr> errors(n);
  std::mutex yaml, printing;
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  auto work = [&] {
    while (!failed) {
      const std::size_t i = next++;
      if (i >= n) return;
      ExperimentConfig config;
      ProgressFn report;
      {
        std::lock_guard<std::mutex> lock(yaml);
        config = sweep.config(i);
        results[i].label = sweep.label(i);
        results[i].assignments = sweep.assignments(i);
        if (kept[i]) {
          results[i].summary = *kept[i];  // --resume: complete for this very config
          continue;
        }
        if (progress) report = progress(results[i].label, i, n);
      }
      if (report && jobs > 1)
        report = [&printing, inner = std::move(report)](double now, std::int64_t arrived, std::int64_t finished) {
          std::lock_guard<std::mutex> lock(printing);
          inner(now, arrived, finished);
        };
      try {
        results[i].summary = run_experiment(config, out / point_folder(i, results[i].label), report);
      } catch (...) {
        errors[i] = std::current_exception();
        failed = true;
      }
    }
  };
  if (jobs <= 1) {
    work();
  } else {
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < std::min(jobs, n); ++t) threads.emplace_back(work);
    for (auto& t : threads) t.join();
  }
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  return results;
}

// sweep.csv: one row per point; host timings stay in each summary.json (reproducibility).
void write_sweep_csv(const std::vector<std::string>& keys, const std::vector<PointResult>& results,
                     const std::filesystem::path& out) {
  AtomicFile csv(out / "sweep.csv");
  std::string header = "point,label";
  for (const auto& k : keys) header += "," + csv_field(k);
  const auto flat0 = flatten(results.front().summary.to_json());
  for (const auto& [k, v] : flat0)
    if (!is_host_timing(k)) header += "," + k;
  csv.stream() << header << '\n';
  for (std::size_t i = 0; i < results.size(); ++i) {
    std::string row = fmt::format("{},{}", point_folder(i, results[i].label), csv_field(results[i].label));
    for (const auto& k : keys) {
      std::string v;
      for (const auto& [ak, av] : results[i].assignments)
        if (ak == k) v = av;
      row += "," + csv_field(v);
    }
    for (const auto& [k, v] : flatten(results[i].summary.to_json()))
      if (!is_host_timing(k)) row += "," + v.dump();
    csv.stream() << row << '\n';
  }
  csv.commit();
}

}  // namespace

std::vector<PointResult> run_experiment_file(const std::string& file, const std::vector<std::string>& overrides,
                                             const std::filesystem::path& out, const ProgressFactory& progress,
                                             std::size_t jobs, ExistingResults existing) {
  const Sweep sweep = Sweep::from_file(file, overrides);
  const bool swept = sweep.swept();
  if (swept) check_sweep_points(sweep);
  ResultFolder folder(out, existing);
  std::vector<PlannedPoint> plan;
  for (std::size_t i = 0; i < sweep.size(); ++i)
    plan.push_back({swept ? point_folder(i, sweep.label(i)) : std::string(), resolved_config_text(sweep.config(i))});
  const std::vector<std::optional<Summary>> kept = folder.prepare(plan);
  std::vector<PointResult> results;
  if (!swept) {
    PointResult r;
    if (kept[0])
      r.summary = *kept[0];  // --resume: complete for this very config
    else
      r.summary = run_experiment(sweep.config(0), out, progress ? progress("", 0, 1) : ProgressFn{});
    results.push_back(std::move(r));
  } else {
    results = run_sweep_points(sweep, out, progress, jobs, kept);
    write_sweep_csv(sweep.keys(), results, out);
  }
  folder.finish();
  return results;
}

}  // namespace pagesim::sim

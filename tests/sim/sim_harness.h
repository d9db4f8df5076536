// Test harness: runs a Simulation over a hand-written trace with a constant cost model and
// keeps every request's record and every iteration's row for exact checks. Every run checks
// the scheduler's and the allocator's invariants after every iteration. Also the builders of
// the small paged pools and watermark-free settings such runs use.
#pragma once

#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "allocator/kv_allocator.h"
#include "allocator/paged/paged_allocator.h"
#include "sim/cost/constant_cost_model.h"
#include "sim/engine/simulation.h"
#include "sim/metrics/metrics.h"
#include "sim/scheduler/scheduler.h"
#include "traces/vector_source.h"

namespace pagesim::sim::testing {

inline traces::TraceRequest trace_req(std::uint64_t id, double t, std::int64_t prompt, std::int64_t output,
                                      std::int32_t n = 1, std::int32_t beam = 1) {
  traces::TraceRequest r;
  r.id = id;
  r.arrival_s = t;
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  r.n = n;
  r.beam_width = beam;
  return r;
}

// A PagedAllocator of `blocks` GPU blocks of `block_size` slots and `cpu_blocks` CPU swap
// blocks, without a prefix cache.
inline alloc::PagedAllocator paged(std::int64_t blocks, std::int32_t block_size, std::int64_t cpu_blocks = 0) {
  alloc::PagedAllocatorSettings s;
  s.num_blocks = blocks;
  s.block_size = block_size;
  s.num_cpu_blocks = cpu_blocks;
  return alloc::PagedAllocator(s);
}

// `kind`'s settings without the watermark (by default 1% of blocks kept free), which the
// hand-worked timelines leave out so that a pool's every block counts.
inline SchedulerSettings no_watermark(SchedulerKind kind) {
  SchedulerSettings s;
  s.kind = kind;
  s.watermark = 0;
  return s;
}

// One CSV row as a map from header name to text.
using Row = std::map<std::string, std::string>;

inline std::vector<Row> parse_csv(const std::string& text) {
  std::vector<Row> rows;
  std::istringstream in(text);
  std::string line;
  std::vector<std::string> header;
  auto split = [](const std::string& l) {
    std::vector<std::string> f;
    std::stringstream ss(l);
    for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
    return f;
  };
  if (std::getline(in, line)) header = split(line);
  while (std::getline(in, line)) {
    auto f = split(line);
    Row r;
    for (std::size_t i = 0; i < header.size() && i < f.size(); ++i) r[header[i]] = f[i];
    rows.push_back(std::move(r));
  }
  return rows;
}

// An allocator and the scheduler that drives it, built as the experiment builds them: a
// policy that needs a paged pool gets the PagedAllocator itself.
struct Stack {
  std::unique_ptr<alloc::KvAllocator> allocator;
  std::unique_ptr<Scheduler> scheduler;
  bool paged = false;
};

template <class Allocator>
Stack make_stack(std::unique_ptr<Allocator> allocator, const SchedulerSettings& settings) {
  Stack st;
  st.scheduler = make_scheduler(settings, *allocator);
  st.paged = std::is_same_v<Allocator, alloc::PagedAllocator>;
  st.allocator = std::move(allocator);
  return st;
}

// Checks the scheduler's and the allocator's invariants at every iteration (throws on the
// first broken one) and counts the checks.
class InvariantChecker final : public IterationObserver {
 public:
  explicit InvariantChecker(const Scheduler& scheduler) : scheduler_(scheduler) {}
  void on_iteration(const IterationSample&, const IterationPlan&) override {
    scheduler_.validate();
    scheduler_.allocator().validate();
    ++checks_;
  }
  std::int64_t checks() const { return checks_; }

 private:
  const Scheduler& scheduler_;
  std::int64_t checks_ = 0;
};

struct Outcome {
  std::vector<Row> requests;    // in finishing order
  std::vector<Row> iterations;  // every iteration
  Summary summary;
  std::int64_t iterations_run = 0;

  const Row& request(std::uint64_t id) const {
    for (const auto& r : requests)
      if (r.at("id") == std::to_string(id)) return r;
    throw std::out_of_range("no request " + std::to_string(id));
  }
  double value(std::uint64_t id, const char* column) const { return std::stod(request(id).at(column)); }
};

// Runs `source` through `kind` over `allocator` (a PagedAllocator or RadixAllocator for
// policies that need one) with a ConstantCostModel (seconds per iteration `a`, per swapped
// block `swap_s`) and beam model `beam`; checks the invariants after every iteration and
// validates scheduler and allocator at the end.
template <class Allocator>
Outcome simulate_source(traces::RequestSource& source, Allocator& allocator, const SchedulerSettings& settings,
                        double a = 1.0, double swap_s = 0.0, std::uint64_t seed = 0,
                        const BeamModelSettings& beam = {}) {
  auto scheduler = make_scheduler(settings, allocator);
  ConstantCostCoefficients k;
  k.seconds_per_iteration = a;
  k.seconds_per_swap_block = swap_s;
  ConstantCostModel cost(k);
  std::ostringstream req_csv, it_csv;
  MetricsSettings ms;
  ms.kv_bytes_per_token = 1.0;
  ms.block_size = allocator.block_size();
  Metrics metrics(ms, &req_csv, &it_csv, {&allocator});
  EngineSettings es;
  es.seed = seed;
  es.beam = beam;
  Simulation sim(source, *scheduler, cost, es);
  InvariantChecker checker(*scheduler);
  sim.add_observer(metrics);
  sim.add_observer(checker);
  sim.run();
  scheduler->validate();
  allocator.validate();
  Outcome o;
  o.summary = metrics.finish(sim.now(), 0);
  o.requests = parse_csv(req_csv.str());
  o.iterations = parse_csv(it_csv.str());
  o.iterations_run = sim.iterations();
  return o;
}

// simulate_source over `trace` (requests without token identities, or with their own).
template <class Allocator>
Outcome simulate(std::vector<traces::TraceRequest> trace, Allocator& allocator, const SchedulerSettings& settings,
                 double a = 1.0, double swap_s = 0.0, std::uint64_t seed = 0, const BeamModelSettings& beam = {}) {
  traces::VectorSource source(std::move(trace));
  return simulate_source(source, allocator, settings, a, swap_s, seed, beam);
}

// simulate over a trace whose hash ids cover `hash_block_tokens` tokens each.
template <class Allocator>
Outcome simulate_hashed(std::vector<traces::TraceRequest> trace, std::int64_t hash_block_tokens, Allocator& allocator,
                        const SchedulerSettings& settings) {
  traces::VectorSource source(std::move(trace), hash_block_tokens);
  return simulate_source(source, allocator, settings);
}

}  // namespace pagesim::sim::testing

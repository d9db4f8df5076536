#include "sim/config/experiment_config.h"

#include <array>
#include <fstream>
#include <sstream>

#include "allocator/contiguous/placement.h"
#include "allocator/contiguous/reservation_policy.h"
#include "allocator/paged/eviction_policy.h"
#include "sim/config/config_error.h"
#include "sim/config/yaml_visitors.h"

namespace pagesim::sim {
namespace {

using traces::EnumName;

constexpr std::array<EnumName<SchedulerKind>, 4> kSchedulerNames = {{
    {SchedulerKind::kStatic, "static"},
    {SchedulerKind::kOrca, "orca"},
    {SchedulerKind::kVllm, "vllm"},
    {SchedulerKind::kSarathi, "sarathi"},
}};
constexpr std::array<EnumName<PreemptionMode>, 3> kPreemptionNames = {{
    {PreemptionMode::kAuto, "auto"},
    {PreemptionMode::kRecompute, "recompute"},
    {PreemptionMode::kSwap, "swap"},
}};

template <class E, std::size_t N>
std::span<const EnumName<E>> names(const std::array<EnumName<E>, N>& a) {
  return std::span<const EnumName<E>>(a.data(), a.size());
}

// ---- The field lists: one per section, shared by reader and writer. ----

template <class V>
void visit(V& v, traces::LengthSpec& s) {
  v.choice("kind", s.kind, names(traces::kLengthKindNames));
  v.field("value", s.value);
  v.field("lo", s.lo);
  v.field("hi", s.hi);
  v.field("median", s.median);
  v.field("mean", s.mean);
  v.field("sigma", s.sigma);
  v.field("s", s.s);
}

template <class V>
void visit(V& v, traces::WorkloadSpec& w) {
  v.choice("kind", w.kind, names(traces::kWorkloadKindNames));
  v.section("trace", [&](auto& t) {
    t.field("path", w.trace.path);
    t.choice("format", w.trace.format, names(traces::kTraceFormatNames));
    t.field("hash_block_tokens", w.trace.hash_block_tokens);
    t.field("time_scale", w.trace.time_scale);
  });
  v.section("arrival", [&](auto& a) {
    a.choice("kind", w.arrival.kind, names(traces::kArrivalKindNames));
    a.field("rate", w.arrival.rate);
    a.field("quantum_s", w.arrival.quantum_s);
    a.field("cv", w.arrival.cv);
    a.field("on_s", w.arrival.on_s);
    a.field("off_s", w.arrival.off_s);
  });
  v.section("lengths", [&](auto& l) {
    l.choice("kind", w.lengths.kind, names(traces::kLengthsKindNames));
    l.section("prompt", [&](auto& p) { visit(p, w.lengths.prompt); });
    l.section("output", [&](auto& o) { visit(o, w.lengths.output); });
    l.field("path", w.lengths.path);
    l.field("prompt_column", w.lengths.columns.prompt);
    l.field("output_column", w.lengths.columns.output);
  });
  v.list("sampling", w.sampling, [](auto& e, traces::SamplingChoice& c) {
    e.field("weight", c.weight);
    e.field("n", c.n);
    e.field("beam_width", c.beam_width);
  });
  v.field("max_total_tokens", w.max_total_tokens);
  v.field("duration_s", w.duration_s);
  v.field("max_requests", w.max_requests);
}

template <class V>
void visit(V& v, ExperimentConfig& c) {
  v.field("name", c.name);
  v.field("seed", c.seed);
  v.section("workload", [&](auto& w) { visit(w, c.workload); });
  v.field("model", c.model);
  v.field("gpu", c.gpu);
  v.field("tensor_parallel", c.tensor_parallel);
  v.section("kv", [&](auto& k) {
    k.field("slots", c.kv.slots);
    k.field("gpu_memory_utilization", c.kv.gpu_memory_utilization);
    k.field("activation_reserve_gib", c.kv.activation_reserve_gib);
  });
  v.section("allocator", [&](auto& a) {
    a.field("kind", c.allocator.kind);
    a.field("block_size", c.allocator.block_size);
    a.field("reservation", c.allocator.reservation);
    a.field("placement", c.allocator.placement);
    a.field("max_seq_len", c.allocator.max_seq_len);
    a.field("max_chunk_blocks", c.allocator.max_chunk_blocks);
    a.field("prefix_cache", c.allocator.prefix_cache);
    a.field("eviction", c.allocator.eviction);
    a.field("cpu_swap_gib", c.allocator.cpu_swap_gib);
  });
  v.section("scheduler", [&](auto& s) {
    s.choice("kind", c.scheduler.kind, names(kSchedulerNames));
    s.field("max_num_batched_tokens", c.scheduler.max_num_batched_tokens);
    s.field("max_num_seqs", c.scheduler.max_num_seqs);
    s.field("watermark", c.scheduler.watermark);
    s.choice("preemption", c.scheduler.preemption, names(kPreemptionNames));
    s.field("chunk_tokens", c.scheduler.chunk_tokens);
  });
  v.section("cost", [&](auto& k) {
    k.field("kind", c.cost.kind);
    k.field("compute_efficiency", c.cost.compute_efficiency);
    k.field("memory_efficiency", c.cost.memory_efficiency);
    k.field("iteration_overhead_s", c.cost.iteration_overhead_s);
    k.section("constant", [&](auto& q) {
      q.field("seconds_per_iteration", c.cost.constant.seconds_per_iteration);
      q.field("seconds_per_prefill_token", c.cost.constant.seconds_per_prefill_token);
      q.field("seconds_per_decode_seq", c.cost.constant.seconds_per_decode_seq);
      q.field("seconds_per_decode_context_token", c.cost.constant.seconds_per_decode_context_token);
      q.field("seconds_per_swap_block", c.cost.constant.seconds_per_swap_block);
      q.field("seconds_per_swap_token", c.cost.constant.seconds_per_swap_token);
    });
    k.field("profile", c.cost.profile);
  });
  v.section("measure", [&](auto& m) {
    m.field("window_start_s", c.measure.window_start_s);
    m.field("window_end_s", c.measure.window_end_s);
  });
  v.section("output", [&](auto& o) {
    o.field("iterations_stride", c.output.iterations_stride);
    o.field("requests_csv", c.output.requests_csv);
  });
  v.ignore("sweep");
}

int line_at(const YAML::Node& root, std::initializer_list<const char*> path) {
  YAML::Node n = root;
  for (const char* k : path) {
    if (!n || !n.IsMap() || !n[k]) return YamlReader::line_of(n);
    n = n[k];
  }
  return YamlReader::line_of(n);
}

// Checks of values whose meaning lives in other modules, so that errors carry a line.
void check_values(const YAML::Node& root, const std::string& file, const ExperimentConfig& c) {
  auto bad = [&](std::initializer_list<const char*> path, const std::string& key, const std::string& msg) {
    throw ConfigError(file, line_at(root, path), key, msg);
  };
  const auto& a = c.allocator;
  if (a.kind != "paged" && a.kind != "contiguous")
    bad({"allocator", "kind"}, "allocator.kind", "expected one of paged, contiguous, found '" + a.kind + "'");
  try {
    alloc::ReservationPolicy::parse(a.reservation);
  } catch (const std::exception& e) {
    bad({"allocator", "reservation"}, "allocator.reservation", e.what());
  }
  try {
    alloc::parse_placement_kind(a.placement);
  } catch (const std::exception& e) {
    bad({"allocator", "placement"}, "allocator.placement", e.what());
  }
  try {
    alloc::parse_eviction_kind(a.eviction);
  } catch (const std::exception& e) {
    bad({"allocator", "eviction"}, "allocator.eviction", e.what());
  }
  if (a.cpu_swap_gib < 0) bad({"allocator", "cpu_swap_gib"}, "allocator.cpu_swap_gib", "expected a number >= 0");
  try {
    parse_cost_model_kind(c.cost.kind);
  } catch (const std::exception& e) {
    bad({"cost", "kind"}, "cost.kind", e.what());
  }
  if (c.kv.slots < 0) bad({"kv", "slots"}, "kv.slots", "expected an integer >= 0 (0 = derive from GPU memory)");
  if (c.tensor_parallel < 1) bad({"tensor_parallel"}, "tensor_parallel", "expected an integer >= 1");
  if (c.measure.window_end_s <= c.measure.window_start_s)
    bad({"measure"}, "measure", "expected window_start_s < window_end_s");
  if (c.output.iterations_stride < 0)
    bad({"output", "iterations_stride"}, "output.iterations_stride", "expected an integer >= 0");
}

}  // namespace

ExperimentConfig parse_experiment(const YAML::Node& root, const std::string& file) {
  if (!root || !root.IsMap()) throw ConfigError(file, YamlReader::line_of(root), "", "expected a YAML map of settings");
  ExperimentConfig c;
  YamlReader r(root, "", file);
  visit(r, c);
  r.done();
  c.workload.seed = c.seed;
  check_values(root, file, c);
  return c;
}

YAML::Node to_yaml(const ExperimentConfig& config) {
  ExperimentConfig c = config;  // the visitors take non-const references
  YAML::Node root(YAML::NodeType::Map);
  YamlWriter w(root);
  visit(w, c);
  return root;
}

YAML::Node load_yaml_file(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw ConfigError(file, 0, "", "cannot open the file");
  try {
    return YAML::Load(in);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(file, e.mark.line + 1, "", "YAML syntax error: " + e.msg);
  }
}

void apply_override(YAML::Node& root, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ConfigError("--set", 0, assignment, "expected key.path=value");
  const std::string path = assignment.substr(0, eq);
  YAML::Node value;
  try {
    value = YAML::Load(assignment.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    throw ConfigError("--set", 0, path, "value is not valid YAML: " + e.msg);
  }
  set_path(root, path, value, "--set");
}

void set_path(YAML::Node& root, const std::string& path, const YAML::Node& value, const std::string& origin) {
  if (!root || !root.IsMap()) root = YAML::Node(YAML::NodeType::Map);
  std::vector<std::string> keys;
  std::stringstream ss(path);
  for (std::string k; std::getline(ss, k, '.');) {
    if (k.empty()) throw ConfigError(origin, 0, path, "empty key in the path");
    keys.push_back(k);
  }
  if (keys.empty()) throw ConfigError(origin, 0, path, "empty key path");
  // Walk with fresh handles: assigning to a copied yaml-cpp Node rebinds it.
  std::vector<YAML::Node> chain{root};
  for (std::size_t i = 0; i + 1 < keys.size(); ++i) {
    YAML::Node next = chain.back()[keys[i]];
    if (!next || next.IsNull()) {
      chain.back()[keys[i]] = YAML::Node(YAML::NodeType::Map);
      next = chain.back()[keys[i]];
    }
    if (!next.IsMap()) throw ConfigError(origin, 0, path, "'" + keys[i] + "' is not a section");
    chain.push_back(next);
  }
  chain.back()[keys.back()] = YAML::Clone(value);
}

}  // namespace pagesim::sim

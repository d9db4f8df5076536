#include "sim/config/experiment_config.h"

#include <charconv>
#include <cmath>
#include <stdexcept>
#include <fstream>
#include <utility>

#include <fmt/format.h>

#include "sim/config/config_error.h"
#include "sim/config/yaml_visitors.h"

namespace pagesim::sim {
namespace {

// ---- The field lists: one per section, shared by reader and writer. ----

template <class V>
void visit(V& v, traces::LengthSpec& s) {
  v.choice("kind", s.kind, traces::kLengthKindNames);
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
  v.choice("kind", w.kind, traces::kWorkloadKindNames);
  v.section("trace", [&](auto& t) {
    t.field("path", w.trace.path);
    t.choice("format", w.trace.format, traces::kTraceFormatNames);
    t.field("hash_block_tokens", w.trace.hash_block_tokens);
    t.field("time_scale", w.trace.time_scale);
  });
  v.section("arrival", [&](auto& a) {
    a.choice("kind", w.arrival.kind, traces::kArrivalKindNames);
    a.field("rate", w.arrival.rate);
    a.field("quantum_s", w.arrival.quantum_s);
    a.field("cv", w.arrival.cv);
    a.field("on_s", w.arrival.on_s);
    a.field("off_s", w.arrival.off_s);
  });
  v.section("lengths", [&](auto& l) {
    l.choice("kind", w.lengths.kind, traces::kLengthsKindNames);
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
  v.choice("rng", w.rng, traces::kWorkloadRngNames);
  v.choice_omitted_at_default("oversize", w.oversize, traces::kOversizePolicyNames, traces::OversizePolicy::kError);
}

template <class V>
void visit(V& v, ExperimentConfig& c) {
  v.field("name", c.name);
  v.field("seed", c.seed);
  v.section("workload", [&](auto& w) { visit(w, c.workload); });
  v.field("model", c.model);
  v.field("gpu", c.gpu);
  v.field("tensor_parallel", c.tensor_parallel);
  v.parsed_omitted_at_default("max_model_len", c.max_model_len, parse_max_model_len, format_max_model_len,
                              kMaxModelLenOff);
  v.section("kv", [&](auto& k) {
    k.field("slots", c.kv.slots);
    k.field("gpu_memory_utilization", c.kv.gpu_memory_utilization);
    k.field("activation_reserve_gib", c.kv.activation_reserve_gib);
  });
  v.section("allocator", [&](auto& a) {
    a.choice("kind", c.allocator.kind, alloc::kAllocatorKindNames);
    a.field("block_size", c.allocator.block_size);
    a.parsed("reservation", c.allocator.reservation, alloc::ReservationPolicy::parse,
             [](const alloc::ReservationPolicy& p) { return p.to_string(); });
    a.choice("placement", c.allocator.placement, alloc::kPlacementKindNames);
    a.field("max_seq_len", c.allocator.max_seq_len);
    a.field("max_chunk_blocks", c.allocator.max_chunk_blocks);
    a.field("prefix_cache", c.allocator.prefix_cache);
    a.choice("eviction", c.allocator.eviction, alloc::kEvictionKindNames);
    a.field("cpu_swap_gib", c.allocator.cpu_swap_gib);
  });
  v.section("scheduler", [&](auto& s) {
    s.choice("kind", c.scheduler.kind, kSchedulerKindNames);
    s.field("max_num_batched_tokens", c.scheduler.max_num_batched_tokens);
    s.field("max_num_seqs", c.scheduler.max_num_seqs);
    s.field("watermark", c.scheduler.watermark);
    s.choice("preemption", c.scheduler.preemption, kPreemptionModeNames);
    s.field("chunk_tokens", c.scheduler.chunk_tokens);
    s.choice_omitted_at_default("schedule_policy", c.scheduler.schedule_policy, kSchedulePolicyNames,
                                SchedulePolicy::kLpm);
  });
  v.section("beam", [&](auto& b) {
    b.choice("model", c.beam.model, kBeamModelNames);
    b.field("mean_entropy_nats", c.beam.mean_entropy_nats);
  });
  v.section("cost", [&](auto& k) {
    k.choice("kind", c.cost.kind, kCostModelKindNames);
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
  v.section("validate", [&](auto& q) {
    q.field("every_n_iterations", c.validate.every_n_iterations);
    q.field("max_batches", c.validate.max_batches);
  });
  v.ignore("sweep");
}

// The most memory a setting in GiB may give: 2^20 GiB = 1 PiB, beyond any machine, and small
// enough that its bytes (2^50) and the sums made of them fit std::int64_t.
constexpr double kMaxGib = 1 << 20;

// The roofline overrides: a negative value (the default, -1) keeps the GPU preset's; anything
// else must be usable: an efficiency in (0, 1] (0 would make every iteration take forever,
// NaN would silently keep the preset), an overhead finite and >= 0.
void check_cost(const ExperimentConfig& c) {
  const ConfigOrigin& o = c.origin;
  auto efficiency = [&](const char* key, double v) {
    if (std::isnan(v) || v == 0 || v > 1)
      throw o.error(key, fmt::format("expected a fraction in (0, 1], or a negative number to keep the GPU "
                                     "preset's, found {}",
                                     v));
  };
  efficiency("cost.compute_efficiency", c.cost.compute_efficiency);
  efficiency("cost.memory_efficiency", c.cost.memory_efficiency);
  const double overhead = c.cost.iteration_overhead_s;
  if (!std::isfinite(overhead))
    throw o.error("cost.iteration_overhead_s",
                  fmt::format("expected a finite number of seconds >= 0, or a negative number to keep the GPU "
                              "preset's, found {}",
                              overhead));
}

// Settings that are valid alone but mean nothing together: each would run and report numbers
// that do not describe what the file asks for.
void check_combinations(const ExperimentConfig& c) {
  const ConfigOrigin& o = c.origin;
  check_cost(c);
  const AllocatorConfig& a = c.allocator;
  const bool paged = a.kind == alloc::AllocatorKind::kPaged;
  if (c.scheduler.preemption == PreemptionMode::kSwap && a.cpu_swap_gib == 0)
    throw o.error(o.has("allocator.cpu_swap_gib") ? "allocator.cpu_swap_gib" : "scheduler.preemption",
                  "scheduler.preemption: swap needs CPU swap space, but allocator.cpu_swap_gib is 0 (every "
                  "preemption would quietly recompute): set allocator.cpu_swap_gib > 0, or scheduler.preemption: "
                  "recompute");
  const bool radix = a.kind == alloc::AllocatorKind::kRadix;
  if (c.scheduler.kind == SchedulerKind::kSglang && !radix)
    throw o.error("allocator.kind", fmt::format("scheduler.kind: sglang runs over SGLang's radix-tree cache; found "
                                                "allocator.kind '{}': set allocator.kind: radix (or leave it out)",
                                                alloc::to_string(a.kind)));
  if (o.has("scheduler.schedule_policy") && c.scheduler.kind != SchedulerKind::kSglang)
    throw o.error("scheduler.schedule_policy",
                  fmt::format("schedule_policy orders the waiting queue of scheduler.kind: sglang; scheduler.kind is "
                              "'{}'",
                              to_string(c.scheduler.kind)));
  if (c.scheduler.kind == SchedulerKind::kSglang && c.scheduler.preemption == PreemptionMode::kSwap)
    throw o.error("scheduler.preemption",
                  "sglang retracts requests by recompute only (their cached prefix stays in the radix tree); set "
                  "scheduler.preemption: auto or recompute");
  if (radix && o.has("allocator.prefix_cache"))
    throw o.error("allocator.prefix_cache",
                  "the radix allocator always caches prompt prefixes (its radix tree is the cache); leave "
                  "allocator.prefix_cache out, or use allocator.kind: paged");
  if (radix && o.has("allocator.eviction"))
    throw o.error("allocator.eviction",
                  "the radix allocator evicts unreferenced leaves least recently used first (SGLang's default); "
                  "leave allocator.eviction out, or use allocator.kind: paged");
  if (a.prefix_cache && !paged)
    throw o.error("allocator.prefix_cache",
                  fmt::format("the prefix cache shares blocks of the paged allocator; allocator.kind is '{}': "
                              "set allocator.kind: paged, or prefix_cache: false",
                              alloc::to_string(a.kind)));
  if (a.prefix_cache && c.workload.kind == traces::WorkloadKind::kSynthetic)
    throw o.error("allocator.prefix_cache",
                  "a synthetic workload has no token identities (hash_ids), so no prompt could ever hit the "
                  "prefix cache: replay a trace that carries them (workload.kind: trace, e.g. format: "
                  "mooncake), or set prefix_cache: false");
  if (a.reservation.kind() == alloc::ReservationPolicy::Kind::kFixed && a.reservation.fixed_output_tokens() == 0 &&
      !paged)
    throw o.error("allocator.reservation",
                  "fixed:0 reserves no slot for any output token: every request outgrows its reservation at its "
                  "first decode step; give the expected output length (fixed:N, N >= 1) or use max, pow2 or "
                  "oracle");
  for (std::size_t i = 0; i < c.workload.sampling.size(); ++i) {
    const traces::SamplingChoice& s = c.workload.sampling[i];
    if (s.n > 1 && s.beam_width > 1)
      throw o.error(fmt::format("workload.sampling[{}].beam_width", i),
                    fmt::format("n = {} and beam_width = {} are both set; a request is either parallel sampling "
                                "(n) or beam search (beam_width): give one of them per entry",
                                s.n, s.beam_width));
  }
}

// Checks of values against each other or against a range, at the key's line.
void check_values(const ExperimentConfig& c) {
  const ConfigOrigin& o = c.origin;
  const SchedulerSettings& s = c.scheduler;
  if (s.max_num_batched_tokens < 1)
    throw o.error("scheduler.max_num_batched_tokens", fmt::format("expected an integer >= 1, found {}", s.max_num_batched_tokens));
  if (s.max_num_seqs < 1)
    throw o.error("scheduler.max_num_seqs", fmt::format("expected an integer >= 1, found {}", s.max_num_seqs));
  if (!(s.watermark >= 0 && s.watermark < 1))  // also catches NaN
    throw o.error("scheduler.watermark", fmt::format("expected a fraction in [0, 1), found {}", s.watermark));
  if (s.kind == SchedulerKind::kSarathi && s.chunk_tokens < 1)
    throw o.error("scheduler.chunk_tokens", fmt::format("expected an integer >= 1 for sarathi, found {}", s.chunk_tokens));
  const AllocatorConfig& a = c.allocator;
  if (a.block_size < 1)
    throw o.error("allocator.block_size", fmt::format("expected an integer >= 1 (tokens per block), found {}", a.block_size));
  // An amount in GiB becomes a count of bytes or blocks (std::int64_t); a NaN, an infinity or
  // a value too large for that count would make the conversion undefined behaviour.
  auto check_gib = [&](const char* key, double gib) {
    if (!(gib >= 0 && gib <= kMaxGib))  // also catches NaN
      throw o.error(key, fmt::format("expected a number of GiB >= 0 and <= {} (1 PiB), found {}", kMaxGib, gib));
  };
  check_gib("allocator.cpu_swap_gib", a.cpu_swap_gib);
  check_gib("kv.activation_reserve_gib", c.kv.activation_reserve_gib);
  if (c.kv.slots < 0) throw o.error("kv.slots", "expected an integer >= 0 (0 = derive from GPU memory)");
  if (a.kind == alloc::AllocatorKind::kPaged && c.kv.slots > 0 && c.kv.slots < a.block_size)
    throw o.error("kv.slots", fmt::format("expected room for one block of allocator.block_size = {} slots (the paged "
                                          "allocator), found {}",
                                          a.block_size, c.kv.slots));
  if (c.tensor_parallel < 1) throw o.error("tensor_parallel", "expected an integer >= 1");
  if (!(c.measure.window_start_s < c.measure.window_end_s)) {  // also catches NaN
    // On the end when the file gives it, else on the start (the end is its default then).
    const char* key = o.has("measure.window_end_s") ? "measure.window_end_s" : "measure.window_start_s";
    throw o.error(key, fmt::format("expected window_start_s < window_end_s, found window_start_s = {} and "
                                   "window_end_s = {}",
                                   c.measure.window_start_s, c.measure.window_end_s));
  }
  if (c.validate.every_n_iterations < 0 || c.validate.max_batches < 0)
    throw o.error("validate", "expected every_n_iterations >= 0 and max_batches >= 0");
  if (!(std::isfinite(c.beam.mean_entropy_nats) && c.beam.mean_entropy_nats >= 0))
    throw o.error("beam.mean_entropy_nats",
                  fmt::format("expected a finite number >= 0, found {}", c.beam.mean_entropy_nats));
  if (c.output.iterations_stride < 0) throw o.error("output.iterations_stride", "expected an integer >= 0");
  check_combinations(c);
}

// A copy of `n` made of new nodes, without source marks.
YAML::Node detached(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Scalar:
      return YAML::Node(n.Scalar());
    case YAML::NodeType::Sequence: {
      YAML::Node s(YAML::NodeType::Sequence);
      for (const auto& e : n) s.push_back(detached(e));
      return s;
    }
    case YAML::NodeType::Map: {
      YAML::Node m(YAML::NodeType::Map);
      for (const auto& kv : n) m[detached(kv.first)] = detached(kv.second);
      return m;
    }
    case YAML::NodeType::Null:
      return YAML::Node(YAML::NodeType::Null);
    default:
      return YAML::Node();
  }
}

// "a.b.c" -> {a, b, c}; an empty path or an empty key ("a..b", ".a", "a.") throws.
std::vector<std::string> split_path(const std::string& path, const std::string& origin) {
  std::vector<std::string> keys;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    const std::string k = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (k.empty()) throw ConfigError(origin, 0, path, "empty key in the path (expected key.path=value)");
    keys.push_back(k);
    if (dot == std::string::npos) return keys;
    start = dot + 1;
  }
}

}  // namespace

std::int64_t parse_max_model_len(const std::string& text) {
  if (text == "off") return kMaxModelLenOff;
  if (text == "model") return kMaxModelLenOfModel;
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < 1)
    throw std::invalid_argument("expected off, model (the model's context length) or a number of tokens >= 1, "
                                "found '" + text + "'");
  return n;
}

std::string format_max_model_len(std::int64_t value) {
  if (value == kMaxModelLenOff) return "off";
  if (value == kMaxModelLenOfModel) return "model";
  return std::to_string(value);
}

// scheduler.kind: sglang drives the radix-tree pool: it implies allocator.kind: radix, and
// SGLang's default page of 1 token, unless the file gives them (a kind other than radix is
// refused by check_combinations).
void apply_implied_settings(ExperimentConfig& c) {
  if (c.scheduler.kind != SchedulerKind::kSglang) return;
  if (!c.origin.has("allocator.kind")) c.allocator.kind = alloc::AllocatorKind::kRadix;
  if (!c.origin.has("allocator.block_size") && c.allocator.kind == alloc::AllocatorKind::kRadix)
    c.allocator.block_size = 1;
}

ExperimentConfig parse_experiment(const YAML::Node& root, const std::string& file) {
  if (!root || !root.IsMap()) throw ConfigError(file, YamlReader::line_of(root), "", "expected a YAML map of settings");
  ExperimentConfig c;
  c.origin = ConfigOrigin(file);
  YamlReader r(root, "", c.origin);
  visit(r, c);
  r.done();
  c.workload.seed = c.seed;
  apply_implied_settings(c);
  check_values(c);
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
  // Without the marks of the --set text, which would read as lines of the experiment file.
  set_path(root, path, detached(value), "--set");
}

YAML::Node fork_root(const YAML::Node& root) {
  YAML::Node copy(YAML::NodeType::Map);
  if (root && root.IsMap())
    for (const auto& kv : root) copy[kv.first] = kv.second;  // shares the entries
  return copy;
}

void set_path(YAML::Node& root, const std::string& path, const YAML::Node& value, const std::string& origin) {
  const std::vector<std::string> keys = split_path(path, origin);
  if (!root || root.IsNull()) root.reset(YAML::Node(YAML::NodeType::Map));
  if (!root.IsMap()) throw ConfigError(origin, 0, path, "cannot set a key: the experiment is not a map of settings");
  // The maps along the path are replaced by copies and nothing below them is written to, so
  // roots sharing subtrees with this one (fork_root) stay as they are, and nodes read from a
  // file keep their line numbers. Two yaml-cpp rules shape the walk: assigning to a Node
  // writes through to the node it refers to (handles move with reset()), and nodes must be
  // created through `root`'s own handles, or the memory that owns them can be freed while
  // the tree still points to them.
  YAML::Node parent;
  parent.reset(root);
  for (std::size_t i = 0; i + 1 < keys.size(); ++i) {
    const YAML::Node& cparent = parent;
    const YAML::Node current = cparent[keys[i]];
    if (current && !current.IsNull() && !current.IsMap())
      throw ConfigError(origin, 0, path, "'" + keys[i] + "' is not a section");
    std::vector<std::pair<YAML::Node, YAML::Node>> entries;
    if (current && current.IsMap())
      for (const auto& kv : current) entries.emplace_back(kv.first, kv.second);
    parent[keys[i]] = YAML::Node(YAML::NodeType::Map);
    YAML::Node section = parent[keys[i]];
    for (const auto& [k, v] : entries) section[k] = v;  // shares the entries
    parent.reset(section);
  }
  parent[keys.back()] = value;
}

}  // namespace pagesim::sim

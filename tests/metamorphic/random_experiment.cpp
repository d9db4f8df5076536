#include "random_experiment.h"

#include <array>
#include <filesystem>
#include <string_view>

namespace pagesim::sim::testing {

namespace {

// SplitMix64 (Steele, Lea and Flood 2014): the same stream on every standard library.
class Draw {
 public:
  explicit Draw(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // One of `n` choices, uniformly (the modulo bias of 2^64 is immaterial here).
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }
  bool chance(int percent) { return below(100) < static_cast<std::size_t>(percent); }
  template <class T, std::size_t N>
  const T& pick(const std::array<T, N>& a) {
    return a[below(N)];
  }

 private:
  std::uint64_t state_;
};

const std::string kMooncake =
    (std::filesystem::path(PAGESIM_SOURCE_DIR) / "traces/data/mooncake_conversation_trace.jsonl").string();

// The workload section; `identities`: its requests carry token identities (hash ids), so a
// prefix cache may hit (the simulator refuses a prefix cache without them).
std::string workload(Draw& d, std::string& label, bool& identities, std::int64_t& requests) {
  requests = 40;
  identities = true;
  switch (d.below(3)) {
    case 0:
      identities = false;
      label += "synthetic";
      return "workload:\n"
             "  kind: synthetic\n"
             "  arrival: {kind: poisson, rate: " + std::string(d.pick(std::array<std::string_view, 3>{"4", "16", "64"})) +
             "}\n"
             "  lengths: {prompt: {kind: uniform, lo: 16, hi: 600}, output: {kind: uniform, lo: 1, hi: 200}}\n"
             "  max_requests: " + std::to_string(requests) + "\n";
    case 1:
      label += "sessions";
      return "workload:\n"
             "  kind: sessions\n"
             "  arrival: {kind: poisson, rate: 4.0}\n"
             "  lengths:\n"
             "    prompt: {kind: lognormal, median: 200, sigma: 0.8, lo: 4, hi: 1500}\n"
             "    output: {kind: lognormal, median: 50, sigma: 0.6, lo: 1, hi: 300}\n"
             "  sessions:\n"
             "    turns: {kind: uniform, lo: 1, hi: 4}\n"
             "    think_time: {kind: exponential, mean_s: 2}\n"
             "    system_prompts: 2\n"
             "    system_prompt_tokens: {kind: fixed, value: 256}\n"
             "    block_tokens: 16\n"
             "    max_context_tokens: 3000\n"
             "  max_requests: " + std::to_string(requests) + "\n";
    default:
      label += "mooncake";
      requests = 30;
      return "workload:\n"
             "  kind: trace\n"
             "  trace: {path: '" + kMooncake + "', format: mooncake}\n"
             "  max_requests: " + std::to_string(requests) + "\n"
             "  oversize: truncate\n";
  }
}

}  // namespace

RandomExperiment random_experiment(std::uint64_t seed) {
  Draw d(seed * 0x2545f4914f6cdd1dull + 1);
  RandomExperiment e;
  std::string& y = e.yaml;
  y = "name: metamorphic\nseed: " + std::to_string(seed % 1000) + "\n";
  bool identities = false;
  y += workload(d, e.label, identities, e.requests);

  // Presets, latent-attention presets and an inline architecture (Llama-3-8B's, as config.json
  // gives it: model_config.h).
  static constexpr std::array<std::string_view, 9> kModels = {
      "llama-3-8b", "llama-3-8b", "llama-3-8b", "llama-2-7b", "gpt-oss-120b", "jamba-v0.1", "deepseek-v2-lite",
      "deepseek-v3.2-exp", "custom"};
  const std::string_view model = d.pick(kModels);
  e.layer_groups = model == "gpt-oss-120b" || model == "jamba-v0.1";
  e.mla = model.starts_with("deepseek");
  e.custom_model = model == "custom";
  if (e.custom_model)
    y += "model: {name: my-llama, layers: 32, hidden: 4096, heads: 32, kv_heads: 8, ffn: 14336, vocab: 128256, "
         "max_seq_len: 8192}\n";
  else
    y += "model: " + std::string(model) + "\n";
  y += "gpu: h200\nmax_model_len: 4096\n";
  e.kv_slots = d.pick(std::array<std::int64_t, 3>{8192, 16384, 65536});
  y += "kv: {slots: " + std::to_string(e.kv_slots) + "}\n";
  e.label += std::string(" ") + std::string(model);
  // FlashMLA's 64-token pages (check_latent_attention): the paged pools of an MLA model use them.
  const std::string block = e.mla ? "64" : "16";

  // Allocator, then a scheduler that runs over it (the simulator's pairings: SGLang over its
  // radix cache; the layer-group pools and vAttention under vllm-v1, orca and static; the
  // vLLM schedulers over paged blocks; contiguous under orca and static).
  // Paged three times: most features (prefix caching, tiers, speculative decoding, LoRA) need it.
  static constexpr std::array<std::string_view, 9> kAllocators = {"paged", "paged",  "paged", "contiguous", "radix",
                                                                  "uniform", "hybrid", "jenga", "vattention"};
  const std::string_view allocator = d.pick(kAllocators);
  y += "allocator:\n  kind: " + std::string(allocator) + "\n  block_size: " + block + "\n";
  e.label += " " + std::string(allocator);
  e.slot_units = allocator == "paged" || allocator == "contiguous" || allocator == "radix";
  if (allocator == "radix") {
    e.prefix_cache = identities;  // its radix tree is the cache, always on
  } else if (allocator == "contiguous") {
    y += "  placement: " + std::string(d.pick(std::array<std::string_view, 3>{"first_fit", "best_fit", "buddy"})) + "\n";
    y += "  reservation: " + std::string(d.pick(std::array<std::string_view, 3>{"max", "pow2", "oracle"})) + "\n";
    y += "  max_seq_len: 4096\n";
  } else if (allocator == "vattention") {
    y += "  vattention: {max_batch_size: 32}\n";
  } else if (identities && d.chance(70)) {
    y += "  prefix_cache: true\n";
    e.prefix_cache = true;
    e.label += "+prefix";
  }
  if (allocator == "paged" && e.prefix_cache && d.chance(60)) {
    e.tier = true;
    y += "  cpu_swap_gib: 16\n"
         "  offload:\n"
         "    tiers:\n"
         "      - {kind: cpu, capacity_gib: 4, read_gbps: 25, write_gbps: 25, latency_us: 10}\n";
    e.label += "+tier";
  }

  std::string_view scheduler;
  if (allocator == "radix") {
    scheduler = "sglang";
  } else if (allocator == "paged") {
    // Speculative decoding (vllm-v1) and LoRA (the vLLM schedulers) in some paged draws, each
    // with a scheduler that serves it; the other draws pick among every paged scheduler.
    const std::size_t roll = d.below(10);
    e.speculative = roll < 3 || roll == 9;
    e.lora = (roll >= 3 && roll < 6) || roll == 9;
    if (e.speculative) scheduler = "vllm-v1";
    else if (e.lora) scheduler = d.pick(std::array<std::string_view, 2>{"vllm", "vllm-v1"});
    else scheduler = d.pick(std::array<std::string_view, 6>{"vllm", "vllm-v1", "vllm-v0", "sarathi", "orca", "static"});
  } else if (allocator == "contiguous") {
    scheduler = d.pick(std::array<std::string_view, 2>{"orca", "static"});
  } else {
    scheduler = d.pick(std::array<std::string_view, 3>{"vllm-v1", "orca", "static"});
  }
  y += "scheduler: {kind: " + std::string(scheduler) + "}\n";
  e.label += " " + std::string(scheduler);
  y += "cost: {kind: roofline}\n";

  if (d.chance(45)) {
    e.cluster = true;
    static constexpr std::array<std::string_view, 5> kRouters = {"round_robin", "least_outstanding", "least_kv",
                                                                 "prefix_aware", "random"};
    std::string_view router = d.pick(kRouters);
    if (router == "prefix_aware" && !e.prefix_cache) router = "least_kv";  // it routes by cached prefixes
    const int count = 2 + static_cast<int>(d.below(2));
    y += "replicas:\n  count: " + std::to_string(count) + "\n  router: " + std::string(router) + "\n";
    e.label += " x" + std::to_string(count) + " " + std::string(router);
    if (d.chance(35)) {
      e.disaggregated = true;
      y += "  disaggregated: {prefill: 1, transfer_gbps: 100, transfer_latency_us: 10}\n";
      e.label += " P/D";
    } else if (allocator == "paged" && e.prefix_cache && d.chance(40)) {  // fetched into a paged prefix cache
      e.tier = true;
      y += "  global_cache: {bandwidth_gbps: 100, latency_us: 10}\n";
      e.label += " global-cache";
    }
  }

  // Speculative decoding and LoRA (drawn with the scheduler above), their settings last.
  if (e.speculative) {
    e.speculative_k = d.pick(std::array<std::int64_t, 3>{1, 2, 4});
    const std::string_view method = d.pick(std::array<std::string_view, 3>{"ngram", "eagle", "draft_model"});
    y += "speculative: {method: " + std::string(method) + ", num_speculative_tokens: " +
         std::to_string(e.speculative_k) + ", acceptance: " +
         std::string(d.pick(std::array<std::string_view, 3>{"0.5", "0.8", "1.0"}));
    if (method == "draft_model") y += ", draft_model: llama-3.2-1b";
    if (method != "ngram")
      y += ", draft_kv: " + std::string(d.pick(std::array<std::string_view, 3>{"shared", "own_pool", "none"}));
    y += "}\n";
    e.label += " spec:" + std::string(method) + "/k" + std::to_string(e.speculative_k);
  }
  if (e.lora) {
    const std::string_view placement = d.pick(std::array<std::string_view, 2>{"vllm", "unified"});
    y += "lora: {placement: " + std::string(placement) + ", adapters: " +
         std::string(d.pick(std::array<std::string_view, 3>{"0", "4", "20"})) + ", popularity: " +
         std::string(d.pick(std::array<std::string_view, 2>{"uniform", "zipf"})) + "}\n";
    e.label += " lora:" + std::string(placement);
  }
  return e;
}

}  // namespace pagesim::sim::testing

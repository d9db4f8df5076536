// RandomExperiment: small experiment configs drawn at random, seeds fixed, from every
// allocator, scheduler, router, tier and workload kind, speculative decoding (every method),
// LoRA (both placements, trace-free generated adapters or none), MLA presets and inline
// custom models, for the metamorphic relations
// (relations_test.cpp). A draw is a YAML text and the features it holds; whether the
// simulator accepts the combination is for the caller to find out (ConfigError: draw again).
//
// Draws are a pure function of the seed: the generator is a SplitMix64 stream, not <random>'s
// distributions (whose output differs between standard libraries). Plain value types.
#pragma once

#include <cstdint>
#include <string>

namespace pagesim::sim::testing {

struct RandomExperiment {
  std::string yaml;            // the experiment file's text (paths absolute)
  std::string label;           // its features in a line, for failure messages
  bool prefix_cache = false;
  bool cluster = false;        // replicas: count >= 2
  bool disaggregated = false;
  bool layer_groups = false;   // a model whose layers differ (sliding window, recurrent)
  bool tier = false;           // an offload tier or a global cache
  bool speculative = false;    // speculative decoding (n-gram, EAGLE or a draft model)
  bool lora = false;           // LoRA adapters (vLLM's slots or unified pages)
  bool mla = false;            // a latent-attention preset (DeepSeek-V2-Lite, V3.2's indexer)
  bool custom_model = false;   // the model given inline, not a preset
  std::int64_t speculative_k = 0;  // num_speculative_tokens
  bool slot_units = false;     // the pool counts token slots (paged, contiguous, radix), not bytes
  std::int64_t requests = 0;   // the workload's requests (workload.max_requests)
  std::int64_t kv_slots = 0;   // kv.slots, per replica
};

// The draw of `seed` (any value). Small workloads: tens of requests, prompts of hundreds of
// tokens, so that a run takes milliseconds in a release build.
RandomExperiment random_experiment(std::uint64_t seed);

}  // namespace pagesim::sim::testing

#include "sim/validate/sampled_batch.h"

#include <fstream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace pagesim::sim {
namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::filesystem::path& p, std::int64_t line, const std::string& what) {
  throw std::runtime_error(fmt::format("{}:{}: {}", p.string(), line, what));
}

template <class T>
T need(const json& j, const char* key, const std::filesystem::path& p, std::int64_t line, const char* expected) {
  if (!j.is_object() || !j.contains(key)) bad(p, line, fmt::format("missing key '{}' ({})", key, expected));
  try {
    return j.at(key).get<T>();
  } catch (const json::exception&) {
    bad(p, line, fmt::format("key '{}': expected {}, found {}", key, expected, j.at(key).dump()));
  }
}

}  // namespace

std::string to_json_line(const BatchFileHeader& h) {
  nlohmann::ordered_json j;
  j["format"] = "pagesim-batches";
  j["version"] = 1;
  j["block_size"] = h.block_size;
  j["num_blocks"] = h.num_blocks;
  j["allocator"] = h.allocator;
  j["experiment"] = h.experiment;
  if (!h.mask.causal()) {
    for (const auto& [kind, name] : kernels::kMaskKindNames)
      if (kind == h.mask.kind) j["mask"] = name;
    j["window"] = h.mask.window;
  }
  if (h.latent()) {
    j["attention"] = "latent";
    j["latent_dim"] = h.latent_dim;
    j["value_dim"] = h.value_dim;
  }
  return j.dump();
}

std::string to_json_line(const SampledBatch& b) {
  nlohmann::ordered_json j;
  j["iteration"] = b.iteration;
  j["time_s"] = b.time_s;
  j["sequences"] = nlohmann::ordered_json::array();
  for (const auto& s : b.sequences) {
    nlohmann::ordered_json q;
    q["request"] = s.request;
    q["seq"] = s.seq;
    q["kv_len"] = s.kv_len;
    q["query_len"] = s.query_len;
    q["block_table"] = s.block_table;
    q["tokens"] = nlohmann::ordered_json::array();
    for (const auto& r : s.tokens)
      q["tokens"].push_back({{"start", r.start}, {"length", r.length}, {"origin", r.origin}, {"offset", r.offset}});
    j["sequences"].push_back(std::move(q));
  }
  return j.dump();
}

BatchFile read_batch_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot open the file", path.string()));
  BatchFile f;
  std::string text;
  std::int64_t line = 0;
  while (std::getline(in, text)) {
    ++line;
    if (text.empty()) continue;
    json j;
    try {
      j = json::parse(text);
    } catch (const json::exception& e) {
      bad(path, line, fmt::format("not valid JSON ({})", e.what()));
    }
    if (line == 1) {
      if (need<std::string>(j, "format", path, line, "\"pagesim-batches\"") != "pagesim-batches")
        bad(path, line, "not a pagesim batch file (format must be \"pagesim-batches\")");
      if (need<int>(j, "version", path, line, "1") != 1) bad(path, line, "unsupported version (expected 1)");
      f.header.block_size = need<std::int32_t>(j, "block_size", path, line, "a positive integer");
      f.header.num_blocks = need<std::int64_t>(j, "num_blocks", path, line, "a positive integer");
      if (f.header.block_size < 1 || f.header.block_size > kMaxBatchFileBlockSize)
        bad(path, line, fmt::format("key 'block_size': expected an integer in [1, {}] (tokens per block), found {}",
                                    kMaxBatchFileBlockSize, f.header.block_size));
      if (f.header.num_blocks < 1) bad(path, line, "block_size and num_blocks must be positive");
      f.header.allocator = j.value("allocator", "");
      f.header.experiment = j.value("experiment", "");
      if (j.contains("mask")) {
        const std::string name = need<std::string>(j, "mask", path, line, "causal, sliding_window or chunked_local");
        bool known = false;
        for (const auto& [kind, n] : kernels::kMaskKindNames)
          if (n == name) {
            f.header.mask.kind = kind;
            known = true;
          }
        if (!known) bad(path, line, "mask is '" + name + "', expected causal, sliding_window or chunked_local");
        if (!f.header.mask.causal()) {
          f.header.mask.window = need<std::int32_t>(j, "window", path, line, "a window of >= 1 tokens");
          if (f.header.mask.window < 1) bad(path, line, "window must be >= 1 tokens for a windowed mask");
        }
      }
      if (j.contains("attention")) {
        const std::string kind = need<std::string>(j, "attention", path, line, "standard or latent");
        if (kind == "latent") {
          f.header.latent_dim = need<std::int32_t>(j, "latent_dim", path, line, "a positive integer (elements)");
          f.header.value_dim = need<std::int32_t>(j, "value_dim", path, line, "a positive integer (elements)");
          if (f.header.latent_dim < 1 || f.header.value_dim < 1 || f.header.value_dim > f.header.latent_dim)
            bad(path, line, fmt::format("key 'value_dim': expected an integer in [1, latent_dim = {}], found {}; "
                                        "latent_dim must be >= 1",
                                        f.header.latent_dim, f.header.value_dim));
          if (!f.header.mask.causal()) bad(path, line, "a latent-attention pool has no sliding window: drop 'mask'");
        } else if (kind != "standard") {
          bad(path, line, "key 'attention': expected standard or latent, found '" + kind + "'");
        }
      }
      continue;
    }
    SampledBatch b;
    b.iteration = need<std::int64_t>(j, "iteration", path, line, "an integer");
    b.time_s = need<double>(j, "time_s", path, line, "a number");
    if (!j.contains("sequences") || !j["sequences"].is_array()) bad(path, line, "missing list 'sequences'");
    for (const auto& q : j["sequences"]) {
      SampledSequence s;
      s.request = need<std::uint64_t>(q, "request", path, line, "a non-negative integer");
      s.seq = need<std::uint64_t>(q, "seq", path, line, "a non-negative integer");
      s.kv_len = need<std::int64_t>(q, "kv_len", path, line, "a non-negative integer");
      s.query_len = need<std::int64_t>(q, "query_len", path, line, "a positive integer");
      s.block_table = need<std::vector<std::int32_t>>(q, "block_table", path, line, "a list of block ids");
      // A sequence without a query token has no attention output to compare: it would pass
      // having checked nothing. Every sequence the simulator samples attends >= 1 token.
      if (s.query_len < 1)
        bad(path, line, fmt::format("sequence {}: key 'query_len': expected an integer >= 1 (the tokens that attend), "
                                    "found {}", s.seq, s.query_len));
      if (s.query_len > s.kv_len)
        bad(path, line, fmt::format("sequence {}: expected 1 <= query_len <= kv_len, found {} and {}", s.seq,
                                    s.query_len, s.kv_len));
      if (static_cast<std::int64_t>(s.block_table.size()) * f.header.block_size < s.kv_len)
        bad(path, line, fmt::format("sequence {}: {} blocks cannot hold {} tokens", s.seq, s.block_table.size(),
                                    s.kv_len));
      if (!q.contains("tokens") || !q["tokens"].is_array()) bad(path, line, "missing list 'tokens'");
      std::int64_t next = 0;
      for (const auto& r : q["tokens"]) {
        TokenRun t;
        t.start = need<std::int64_t>(r, "start", path, line, "an integer");
        t.length = need<std::int64_t>(r, "length", path, line, "a positive integer");
        t.origin = need<std::string>(r, "origin", path, line, "a string");
        t.offset = need<std::int64_t>(r, "offset", path, line, "an integer");
        if (t.start != next || t.length < 1)
          bad(path, line, fmt::format("sequence {}: token runs must cover positions in order without gaps "
                                      "(expected a run at {}, found start {} length {})",
                                      s.seq, next, t.start, t.length));
        next += t.length;
        s.tokens.push_back(std::move(t));
      }
      if (next != s.kv_len)
        bad(path, line, fmt::format("sequence {}: token runs cover {} positions, kv_len is {}", s.seq, next, s.kv_len));
      b.sequences.push_back(std::move(s));
    }
    // An empty batch would print pass without running a kernel; the simulator samples only
    // iterations that compute, so one in a file is a damaged or hand-made line.
    if (b.sequences.empty())
      bad(path, line, fmt::format("batch of iteration {}: key 'sequences': expected at least one sequence, found "
                                  "an empty list", b.iteration));
    f.batches.push_back(std::move(b));
  }
  if (line == 0) throw std::runtime_error(fmt::format("{}: empty file (expected a pagesim batch file)", path.string()));
  return f;
}

}  // namespace pagesim::sim

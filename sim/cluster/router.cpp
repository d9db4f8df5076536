#include "sim/cluster/router.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <random>

namespace pagesim::sim {
namespace {

// The lowest index among those with the smallest key(replica).
template <class Key>
std::int32_t argmin(std::span<const Replica> replicas, Key&& key) {
  std::int32_t best = 0;
  auto best_key = key(replicas[0]);
  for (std::size_t i = 1; i < replicas.size(); ++i) {
    const auto k = key(replicas[i]);
    if (k < best_key) {
      best_key = k;
      best = static_cast<std::int32_t>(i);
    }
  }
  return best;
}

// The least-loaded replica from the index; in debug builds checked against the scan it
// replaces (the Simulation must have set every entry that changed).
std::int32_t least_outstanding(std::span<const Replica> replicas, const LoadIndex& outstanding) {
  assert(outstanding.size() == replicas.size());
  assert(outstanding.argmin() == argmin(replicas, [](const Replica& replica) { return replica.outstanding(); }));
  (void)replicas;
  return outstanding.argmin();
}

// The replica with the most free slots, from the Simulation's FreeSlotsIndex (which checks
// itself in debug builds: a scan here would read deferred runs' replicas behind the instant).
std::int32_t most_free_slots(std::span<const Replica> replicas, const ReplicaLoads& loads) {
  assert(loads.most_free_slots >= 0 && static_cast<std::size_t>(loads.most_free_slots) < replicas.size());
  (void)replicas;
  return loads.most_free_slots;
}

class RoundRobinRouter final : public Router {
 public:
  std::int32_t route(const Request&, std::span<const Replica> replicas, const ReplicaLoads&) override {
    const auto i = static_cast<std::int32_t>(next_ % replicas.size());
    ++next_;
    return i;
  }
  std::string name() const override { return "round_robin"; }
  bool reads_outstanding() const override { return false; }
  bool reads_free_slots() const override { return false; }

 private:
  std::uint64_t next_ = 0;
};

class LeastOutstandingRouter final : public Router {
 public:
  std::int32_t route(const Request&, std::span<const Replica> replicas, const ReplicaLoads& loads) override {
    return least_outstanding(replicas, loads.outstanding);
  }
  std::string name() const override { return "least_outstanding"; }
  bool reads_outstanding() const override { return true; }
  bool reads_free_slots() const override { return false; }
};

class LeastKvRouter final : public Router {
 public:
  std::int32_t route(const Request&, std::span<const Replica> replicas, const ReplicaLoads& loads) override {
    return most_free_slots(replicas, loads);
  }
  std::string name() const override { return "least_kv"; }
  bool reads_outstanding() const override { return false; }
  bool reads_free_slots() const override { return true; }
};

// LoRA: the least-loaded replica whose GPU holds the request's adapter (no load to wait for),
// unless it has more than balance_abs_threshold requests beyond the least-loaded replica;
// otherwise, and for requests to the base model, least_outstanding's choice.
class AdapterAwareRouter final : public Router {
 public:
  explicit AdapterAwareRouter(const RouterSettings& s) : s_(s) {}
  std::int32_t route(const Request& r, std::span<const Replica> replicas, const ReplicaLoads& loads) override {
    const std::int32_t least = least_outstanding(replicas, loads.outstanding);
    if (r.adapter < 0) return least;
    const std::int64_t floor = loads.outstanding.min();
    constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::max();
    const std::int32_t best = argmin(replicas, [&](const Replica& replica) {
      const AdapterCache* a = replica.scheduler().adapters();
      return a && a->resident(r.adapter) ? replica.outstanding() : kNone;
    });
    const std::int64_t load = replicas[static_cast<std::size_t>(best)].outstanding();
    const bool holds = replicas[static_cast<std::size_t>(best)].scheduler().adapters() &&
                       replicas[static_cast<std::size_t>(best)].scheduler().adapters()->resident(r.adapter);
    return holds && load - floor <= s_.balance_abs_threshold ? best : least;
  }
  std::string name() const override { return "adapter_aware"; }
  bool reads_outstanding() const override { return true; }
  bool reads_free_slots() const override { return false; }

 private:
  RouterSettings s_;
};

// SGLang's cache_aware policy over the replicas' real caches (SGLang keeps an approximate
// radix tree of what it sent; a simulator can ask the allocators exactly).
class PrefixAwareRouter final : public Router {
 public:
  explicit PrefixAwareRouter(const RouterSettings& s) : s_(s) {}
  std::int32_t route(const Request& r, std::span<const Replica> replicas, const ReplicaLoads& loads) override {
    const std::int64_t lo = loads.outstanding.min(), hi = loads.outstanding.max();
    const bool imbalanced = hi - lo > s_.balance_abs_threshold &&
                            static_cast<double>(hi) > s_.balance_rel_threshold * static_cast<double>(lo);
    if (imbalanced) return least_outstanding(replicas, loads.outstanding);
    std::int32_t best = 0;
    std::int64_t best_cached = -1;
    for (const Replica& replica : replicas) {
      const std::int64_t cached = replica.cached_prefix_tokens(r.block_hashes);
      if (cached > best_cached) {
        best_cached = cached;
        best = replica.index();
      }
    }
    const double match = r.prompt_tokens > 0 ? static_cast<double>(best_cached) / static_cast<double>(r.prompt_tokens) : 0;
    if (best_cached > 0 && match > s_.cache_threshold) return best;
    return most_free_slots(replicas, loads);
  }
  std::string name() const override { return "prefix_aware"; }
  bool reads_outstanding() const override { return true; }
  bool reads_free_slots() const override { return true; }

 private:
  RouterSettings s_;
};

class RandomRouter final : public Router {
 public:
  explicit RandomRouter(std::uint64_t seed) : rng_(seed) {}
  std::int32_t route(const Request&, std::span<const Replica> replicas, const ReplicaLoads&) override {
    // A plain modulo, not std::uniform_int_distribution, whose algorithm is
    // implementation-defined: the same seed routes the same way with every standard library
    // (the bias, below 2^-50 for any cluster size, does not matter here).
    return static_cast<std::int32_t>(rng_() % replicas.size());
  }
  std::string name() const override { return "random"; }
  bool reads_outstanding() const override { return false; }
  bool reads_free_slots() const override { return false; }

 private:
  std::mt19937_64 rng_;
};

}  // namespace

std::unique_ptr<Router> make_router(const RouterSettings& settings) {
  switch (settings.kind) {
    case RouterKind::kRoundRobin:
      return std::make_unique<RoundRobinRouter>();
    case RouterKind::kLeastOutstanding:
      return std::make_unique<LeastOutstandingRouter>();
    case RouterKind::kLeastKv:
      return std::make_unique<LeastKvRouter>();
    case RouterKind::kPrefixAware:
      return std::make_unique<PrefixAwareRouter>(settings);
    case RouterKind::kAdapterAware:
      return std::make_unique<AdapterAwareRouter>(settings);
    case RouterKind::kRandom:
      return std::make_unique<RandomRouter>(settings.seed ^ 0x726f75746572ULL);  // "router"
  }
  return std::make_unique<RoundRobinRouter>();
}

}  // namespace pagesim::sim

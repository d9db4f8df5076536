// The kinds' descriptors and the generic rules over them (sim/config/kind_rules.h): the
// built-in tables agree with what allocator/ decides by switch, and a new scheduler or pool
// kind is its own descriptor plus one line in a table. The example kinds below, the scheduler
// `example-fcfs` and the pool `example-pages` it runs over, are registered in this file only
// (tables of the built-in kinds plus them, passed in): the implied defaults, the config's
// checks, the factory and the experiment's pairing pick them up without a change to the
// generic code.
#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <string>

#include "allocator/contiguous/contiguous_allocator.h"
#include "allocator/paged/paged_allocator.h"
#include "sim/config/config_error.h"
#include "sim/config/experiment_config.h"
#include "sim/config/kind_rules.h"
#include "throws_config_error.h"
#include "sim/experiment/experiment.h"
#include "sim/scheduler/scheduler.h"
#include "sim/scheduler/scheduler_kinds.h"

namespace pagesim::sim {
namespace {

// ---- The example kind: what a new policy writes in its own files. ----

// A value the enum does not name: the kind exists only in this file's table.
constexpr auto kExampleKind = static_cast<SchedulerKind>(kSchedulerKindNames.size());
constexpr SchedulerTraits kExampleTraits = {.chunked_prefill = false, .repeats_decode_plans = true};

// FCFS iteration-level batching, as orca: grow the running sequences, then admit in order.
class ExampleScheduler final : public Scheduler {
 public:
  ExampleScheduler(const SchedulerSettings& settings, alloc::KvAllocator& allocator)
      : Scheduler(settings, allocator, kExampleTraits) {}
  void schedule(double now, IterationPlan& plan) override {
    begin_iteration(plan);
    grow_running_or_recompute(plan);
    admit_fcfs(now, plan, num_running_seqs());
  }
};

std::unique_ptr<Scheduler> make_example_scheduler(const SchedulerSettings& settings, PoolRef pool) {
  return std::make_unique<ExampleScheduler>(settings, pool.any());
}

// ---- The example pool kind: what a new pool writes in its own files. ----

// A value the enum does not name, as kExampleKind. The pool is the paged one without its
// extras (no swap, tiers, LoRA or prefix cache), as its declared traits say.
constexpr auto kExamplePoolKind = static_cast<alloc::AllocatorKind>(alloc::kAllocatorKindNames.size());
BuiltPool build_example_pool(const alloc::AllocatorSpec& spec) {
  alloc::AllocatorSpec paged = spec;
  paged.kind = alloc::AllocatorKind::kPaged;
  return build_paged_pool(paged);
}
constexpr AllocatorDescriptor kExamplePoolDescriptor = {
    .kind = kExamplePoolKind,
    .name = "example-pages",
    .build = &build_example_pool,
    .declared_traits = alloc::AllocatorTraits{.beam = true},
};

constexpr std::array kExamplePools = {alloc::AllocatorKind::kContiguous, alloc::AllocatorKind::kPaged,
                                      kExamplePoolKind};
constexpr SchedulerDescriptor kExampleSchedulerKind = {
    .kind = kExampleKind,
    .name = "example-fcfs",
    .summary = "FCFS iteration-level batching (a test's example kind)",
    .traits = kExampleTraits,
    .allocators = kExamplePools,
    .drives = PoolInterface::kKvAllocator,
    .pool_check = PoolCheck::kWithPoolKeys,
    .default_block_size = 32,
    .swap_refusal = "example-fcfs preempts by recompute only: set scheduler.preemption: recompute or auto",
    .build = &make_example_scheduler,
};

// ---- Its registration: the built-in kinds plus one line. ----

constexpr std::array kWithExample = {
    kStaticSchedulerKind, kOrcaSchedulerKind,   kVllmSchedulerKind,   kSarathiSchedulerKind,
    kVllmV1SchedulerKind, kVllmV0SchedulerKind, kSglangSchedulerKind,
    kExampleSchedulerKind,  // the registration line
};
constexpr std::array kWithExamplePool = {
    kAllocatorKinds[0], kAllocatorKinds[1], kAllocatorKinds[2], kAllocatorKinds[3],
    kAllocatorKinds[4], kAllocatorKinds[5], kAllocatorKinds[6],
    kExamplePoolDescriptor,  // the registration line
};
constexpr ServingKinds kExampleKinds{kWithExample, kWithExamplePool};

// A config of the example kind as parse_experiment leaves one: parsed with a built-in kind,
// then the kind changed in code and its implied defaults applied.
// `scheduler` adds keys to the scheduler section.
ExperimentConfig example_config(const std::string& yaml, const std::string& scheduler = "") {
  ExperimentConfig c = parse_experiment(
      YAML::Load("name: example\nworkload: {max_requests: 4}\nscheduler: {kind: orca" + scheduler + "}\n" + yaml),
      "exp.yaml");
  c.scheduler.kind = kExampleKind;
  apply_kind_defaults(c, kExampleKinds);
  return c;
}

// The ConfigError check_experiment throws for `c`, as "key: message", or "(no error)".
std::string check_error(const ExperimentConfig& c) {
  try {
    check_experiment(c, kExampleKinds);
  } catch (const ConfigError& e) {
    return e.key() + ": " + e.message();
  }
  return "(no error)";
}

TEST(ExampleKind, ImpliesItsDefaultAllocatorAndBlockSize) {
  const ExperimentConfig c = example_config("");
  EXPECT_EQ(c.allocator.kind, alloc::AllocatorKind::kContiguous);
  EXPECT_EQ(c.allocator.block_size, 32);
  // A block size the file gives stands; over another pool the default block size is not implied.
  EXPECT_EQ(example_config("allocator: {block_size: 8}\n").allocator.block_size, 8);
  const ExperimentConfig paged = example_config("allocator: {kind: paged}\n");
  EXPECT_EQ(paged.allocator.kind, alloc::AllocatorKind::kPaged);
  EXPECT_EQ(paged.allocator.block_size, 16);
  EXPECT_EQ(check_error(c), "(no error)");
  EXPECT_EQ(check_error(paged), "(no error)");
}

TEST(ExampleKind, TheChecksNameItAndTheKey) {
  // A pool outside its list, refused at its pool_check point in the generic words.
  EXPECT_EQ(check_error(example_config("allocator: {kind: radix}\n")),
            "allocator.kind: scheduler.kind 'example-fcfs' needs the contiguous, paged or example-pages allocator, found "
            "'radix'; "
            "allocator.kind 'radix' is SGLang's radix-tree cache, which scheduler.kind: sglang drives: use "
            "scheduler.kind: sglang, or set allocator.kind: contiguous");
  // A layer-group pool refuses it in the pool's words, the kinds listed from the table.
  EXPECT_EQ(check_error(example_config("allocator: {kind: hybrid}\n")),
            "allocator.kind: allocator.kind 'hybrid' runs under scheduler.kind static, orca or vllm-v1 (they need "
            "only the allocator interface); scheduler.kind 'example-fcfs' drives a contiguous, paged or example-pages "
            "pool's own "
            "operations: pick one of those schedulers, or set allocator.kind: contiguous");
  // Its own refusal of swap.
  EXPECT_EQ(check_error(example_config("", ", preemption: swap")),
            "scheduler.preemption: example-fcfs preempts by recompute only: set scheduler.preemption: recompute or "
            "auto");
  // What it does not support, named by the generic checks.
  // (Set in code: the file is parsed under orca, which refuses them already.)
  ExperimentConfig lora = example_config("allocator: {kind: paged}\n");
  lora.lora.enabled = true;
  EXPECT_EQ(check_error(lora),
            "scheduler.kind: lora's admission rules (adapter residency, max_loras) are modelled for vllm, sarathi, "
            "vllm-v1 or vllm-v0; scheduler.kind is 'example-fcfs'");
  ExperimentConfig capped = example_config("");
  capped.scheduler.long_prefill_token_threshold = 64;
  EXPECT_EQ(check_error(capped),
            "scheduler.long_prefill_token_threshold: caps a prefill's tokens per step under vllm-v1 only; "
            "scheduler.kind is example-fcfs: remove it");
}

TEST(ExampleKind, TheFactoryAndThePairingBuildIt) {
  // The one factory, over a pool given as its KvAllocator.
  alloc::ContiguousSettings cs;
  cs.capacity_slots = 4096;
  alloc::ContiguousAllocator contiguous(cs);
  SchedulerSettings ss;
  ss.kind = kExampleKind;
  std::unique_ptr<Scheduler> s = make_scheduler(ss, contiguous, kWithExample);
  ASSERT_NE(dynamic_cast<ExampleScheduler*>(s.get()), nullptr);
  EXPECT_TRUE(s->traits().repeats_decode_plans);
  // The built-in table does not know it.
  EXPECT_THROW(make_scheduler(ss, contiguous), std::invalid_argument);
  // The experiment's pairing: its default pool, built by the allocator's descriptor.
  const sim::Run run = build_run(example_config("kv: {slots: 4096}\n"), kExampleKinds);
  EXPECT_NE(dynamic_cast<const ExampleScheduler*>(run.scheduler.get()), nullptr);
  EXPECT_NE(dynamic_cast<const alloc::ContiguousAllocator*>(run.allocator.get()), nullptr);
}

TEST(ExampleKind, APoolKindIsItsDescriptorPlusOneLine) {
  ExperimentConfig c = example_config("kv: {slots: 4096}\n");
  c.allocator.kind = kExamplePoolKind;
  EXPECT_EQ(check_error(c), "(no error)");
  // The pairing builds it by its descriptor, under a policy whose list names it.
  const sim::Run run = build_run(c, kExampleKinds);
  EXPECT_NE(dynamic_cast<const ExampleScheduler*>(run.scheduler.get()), nullptr);
  EXPECT_NE(dynamic_cast<const alloc::PagedAllocator*>(run.allocator.get()), nullptr);
  EXPECT_EQ(run.allocator->block_size(), 32);
  // Its declared traits, not the paged pool's, decide what the config may ask of it.
  ExperimentConfig cached = c;
  cached.allocator.prefix_cache = true;
  EXPECT_EQ(check_error(cached),
            "allocator.prefix_cache: the prefix cache shares the blocks of a block pool (allocator.kind paged, "
            "uniform, hybrid or jenga); allocator.kind is 'example-pages': set allocator.kind: paged, or "
            "prefix_cache: false");
  ExperimentConfig lora = c;
  lora.lora.enabled = true;
  EXPECT_EQ(check_error(lora).rfind("allocator.kind: lora keeps adapter weights in a paged KV pool", 0), 0u)
      << check_error(lora);
  EXPECT_NE(check_error(lora).find("allocator.kind is 'example-pages'"), std::string::npos) << check_error(lora);
  // The built-in table does not know it.
  EXPECT_THROW(allocator_kind(kServingKinds, kExamplePoolKind), std::invalid_argument);
}

// ---- The built-in tables. ----

TEST(BuiltinKinds, EverySchedulerRunsOverItsDefaultPool) {
  for (const SchedulerDescriptor& d : kSchedulerKinds) {
    EXPECT_EQ(traits_of(d.kind).chunked_prefill, d.traits.chunked_prefill) << d.name;
    EXPECT_FALSE(d.allocators.empty()) << d.name;
    // What the factory needs of the pool, every pool of its list offers once built.
    for (alloc::AllocatorKind a : d.allocators) {
      const AllocatorDescriptor& pool = allocator_kind(kServingKinds, a);
      if (d.drives == PoolInterface::kPaged) {
        EXPECT_EQ(pool.build, &build_paged_pool) << d.name;
      }
      if (d.drives == PoolInterface::kRadix) {
        EXPECT_EQ(pool.build, &build_radix_pool) << d.name;
      }
    }
  }
}

// A key of one allocator kind given under another is refused, naming it and both kinds,
// unless the other kind writes that key's value into config.resolved.yaml itself (the row
// length and buddy chunk it derives), so a resolved config always runs again.
TEST(BuiltinKinds, AnAllocatorKindsOwnKeysAreRefusedUnderAnother) {
  const auto parse = [](const std::string& allocator, const std::string& scheduler = "orca") {
    return parse_experiment(YAML::Load("name: keys\nworkload: {max_requests: 4}\nscheduler: {kind: " + scheduler +
                                       "}\nallocator: " + allocator + "\n"),
                            "exp.yaml");
  };
  EXPECT_TRUE(testing::throws_config_error([&] { parse("{kind: paged, reservation: pow2}", "vllm"); }, "exp.yaml", 4,
                                           "allocator.reservation",
                                           {"sets up allocator.kind: contiguous; allocator.kind is 'paged': remove "
                                            "it, or set allocator.kind: contiguous"}));
  EXPECT_TRUE(testing::throws_config_error([&] { parse("{kind: paged, max_seq_len: 4096}", "vllm"); }, "exp.yaml", 4,
                                           "allocator.max_seq_len", {"contiguous", "'paged'"}));
  EXPECT_TRUE(testing::throws_config_error([&] { parse("{kind: radix, placement: first_fit}", "sglang"); }, "exp.yaml",
                                           4, "allocator.placement", {"contiguous", "'radix'"}));
  EXPECT_TRUE(testing::throws_config_error([&] { parse("{kind: vattention, max_chunk_blocks: 64}"); }, "exp.yaml", 4,
                                           "allocator.max_chunk_blocks", {"contiguous", "'vattention'"}));
  EXPECT_TRUE(testing::throws_config_error([&] { parse("{kind: paged, vattention: {page_kib: 64}}", "vllm"); },
                                           "exp.yaml", 4, "allocator.vattention",
                                           {"sets up allocator.kind: vattention; allocator.kind is 'paged'"}));
  // Written back as derived: the radix pool's rows follow the model's context (max_seq_len and
  // the buddy chunk, as contiguous's), vattention's follow max_model_len.
  EXPECT_NO_THROW(parse("{kind: radix, max_seq_len: 4096, max_chunk_blocks: 256}", "sglang"));
  EXPECT_NO_THROW(parse("{kind: vattention, max_seq_len: 4096}"));
  // Values a resolved config of another kind holds: the defaults.
  EXPECT_NO_THROW(parse("{kind: paged, reservation: max, placement: buddy, max_seq_len: 2048, max_chunk_blocks: 128}",
                        "vllm"));
  const ExperimentConfig own = parse("{kind: contiguous, reservation: pow2, placement: first_fit, max_seq_len: 4096, "
                                     "max_chunk_blocks: 64}");
  EXPECT_EQ(own.allocator.contiguous.placement, alloc::PlacementKind::kFirstFit);
}

TEST(BuiltinKinds, TheFactoryRefusesAPoolWithoutTheInterfaceThePolicyDrives) {
  alloc::ContiguousSettings cs;
  cs.capacity_slots = 4096;
  alloc::ContiguousAllocator contiguous(cs);
  SchedulerSettings ss;
  ss.kind = SchedulerKind::kSglang;
  try {
    make_scheduler(ss, contiguous);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("scheduler.kind 'sglang' needs the radix allocator (allocator.kind: "
                                          "radix), got ",
                                          0),
              0u)
        << e.what();
  }
}

}  // namespace
}  // namespace pagesim::sim

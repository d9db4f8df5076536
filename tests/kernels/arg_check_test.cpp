// Argument checks build their messages only on failure (arg_check.h): a launch runs ~90 of
// them and passes them all, so the passing path must format nothing. Checked two ways: by
// structure (require() does not accept a ready std::string; a passing require never calls
// its message builder) and by behaviour (whole argument checks of valid decode, prefill and
// cache-op arguments perform no heap allocation, which any message built with
// std::string/describe() would).
#include "kernels/arg_check.h"

#include <gtest/gtest.h>

#include <atomic>
#include <limits>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "attention_problem.h"
#include "kernels/attention_args.h"
#include "kernels/cache_op_args.h"
#include "kernels/decode_plan.h"
#include "kernels/kernel_error.h"
#include "kernels/launch_grid.h"
#include "kernels/prefill_plan.h"

// Counts heap allocations of this test binary while `counting` is set. Replacing the global
// operator new is the standard way to observe allocations; only this binary is affected.
namespace {
std::atomic<bool> counting{false};
std::atomic<long> allocations{0};
}  // namespace

void* operator new(std::size_t n) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
// GCC 12 at -O1 and above takes the replaced pair itself for a mismatch (malloc'd by our new,
// freed by our delete); it is the matching pair.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

namespace pagesim::kernels {
namespace {

using detail::require;
using testing::AttentionProblem;
using testing::ProblemSpec;

// Heap allocations made by f().
template <class F>
long allocations_of(F&& f) {
  allocations = 0;
  counting = true;
  f();
  counting = false;
  return allocations.load();
}

template <class S>
concept RequireAccepts = requires(S s) { detail::require(true, "fn", s); };

TEST(ArgCheck, RequireTakesALiteralOrABuilderNeverAString) {
  static_assert(RequireAccepts<const char*>);
  static_assert(!RequireAccepts<std::string>);
  static_assert(!RequireAccepts<const std::string&>);
  int calls = 0;
  auto builder = [&] {
    ++calls;
    return std::string("built ") + std::to_string(calls);
  };
  require(true, "fn", builder);
  EXPECT_EQ(calls, 0) << "a passing check must not build its message";
  try {
    require(false, "fn", builder);
    FAIL() << "expected KernelError";
  } catch (const KernelError& e) {
    EXPECT_STREQ(e.what(), "fn: built 1");
  }
  EXPECT_EQ(calls, 1);
  EXPECT_THROW(require(false, "fn", "fixed"), KernelError);
}

ProblemSpec spec(bool decode) {
  ProblemSpec s;
  s.dtype = DType::kFloat16;
  s.head_dim = 128;
  s.block_size = 16;
  s.num_q_heads = 8;
  s.num_kv_heads = 2;
  s.kv_lens = {1, 15, 17, 100};
  if (!decode) s.query_lens = {1, 15, 5, 100};
  s.alibi = true;
  return s;
}

TEST(ArgCheck, PassingAttentionChecksAllocateNothing) {
  for (bool decode : {true, false}) {
    const AttentionProblem p(spec(decode));
    std::vector<std::byte> out(static_cast<std::size_t>(p.num_query_tokens()) * 8 * 128 * 2);
    const PagedAttentionArgs a = p.paged_args(
        TensorView::contiguous(out.data(), DType::kFloat16, {p.num_query_tokens(), 8, 128}));
    AttentionShape shape;
    EXPECT_EQ(allocations_of([&] { shape = check_paged_attention_args(a, "fn", Backend::kCuda); }), 0)
        << (decode ? "decode" : "prefill");
    EXPECT_EQ(shape.decode, decode);
    EXPECT_EQ(allocations_of([&] { check_paged_attention_args(a, "fn", Backend::kReference); }), 0);
  }
}

TEST(ArgCheck, PassingPlannersAndGridChecksAllocateNothing) {
  const std::vector<std::int32_t> lens = {1, 4096, 70000};
  DecodeProblem d;
  d.num_seqs = 3;
  d.num_q_heads = 32;
  d.num_kv_heads = 8;
  d.head_dim = 128;
  d.kv_lens = lens;
  PrefillProblem pf;
  pf.num_seqs = 3;
  pf.num_q_heads = 32;
  pf.num_kv_heads = 8;
  pf.head_dim = 128;
  pf.max_query_len = 4096;
  EXPECT_EQ(allocations_of([&] {
              plan_decode(d, DecodeDeviceCaps{});
              make_decode_plan(d, DecodeAlgo::kV2, 512);
              const PrefillPlan plan = plan_prefill(pf);
              check_prefill_smem(plan, 227 * 1024, "fn");
              check_launch_grid(prefill_grid(plan), "fn", "kernel");
            }),
            0);
}

TEST(ArgCheck, PassingCacheOpChecksAllocateNothing) {
  const AttentionProblem p(spec(true));
  const auto tokens = static_cast<std::int64_t>(p.slot_mapping().size());
  const ReshapeAndCacheArgs r{p.keys_view(), p.values_view(), p.k_cache_view(), p.v_cache_view(),
                              TensorView::contiguous(p.slot_mapping().data(), DType::kInt64, {tokens})};
  const std::vector<std::int32_t> pairs = {0, 1, 2, 3};
  const TensorView pv = TensorView::contiguous(pairs.data(), DType::kInt32, {2, 2});
  const CopyBlocksArgs c{p.k_cache_view(), p.v_cache_view(), pv};
  const SwapBlocksArgs s{p.k_cache_view(), p.v_cache_view(), p.k_cache_view(), p.v_cache_view(), pv};
  EXPECT_EQ(allocations_of([&] {
              check_reshape_and_cache_args(r, "fn", Backend::kCuda);
              check_copy_blocks_args(c, "fn", Backend::kCuda);
              check_swap_blocks_args(s, "fn", Backend::kCuda);
            }),
            0);
}

// The counter itself works: a failing check does build (and allocate) its message.
TEST(ArgCheck, AFailingCheckIsCounted) {
  const AttentionProblem p(spec(true));
  std::vector<std::byte> out(static_cast<std::size_t>(p.num_query_tokens()) * 8 * 128 * 2);
  PagedAttentionArgs a =
      p.paged_args(TensorView::contiguous(out.data(), DType::kFloat16, {p.num_query_tokens(), 8, 128}));
  a.scale = std::numeric_limits<float>::infinity();
  EXPECT_GT(allocations_of([&] { EXPECT_THROW(check_paged_attention_args(a, "fn", Backend::kCuda), KernelError); }),
            0);
}

}  // namespace
}  // namespace pagesim::kernels

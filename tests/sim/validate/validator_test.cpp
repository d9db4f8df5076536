// The Validator on the CPU reference: synthetic content, a correct batch with shared prefix
// blocks and a fork, the four planted allocator faults, GQA/MHA/MQA, block size 1, prefill
// and mixed batches, lengths at block boundaries, batch problems reported per batch, and
// settings it refuses; a long prefill validated in memory bounded by the reference's tiles.
#include "sim/validate/validator.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <fstream>
#include <new>
#include <string>
#include <vector>

#include "sim/validate/validator_content.h"
#include "validate_test_backends.h"
#include "validate_test_support.h"

namespace pagesim::sim {
namespace {

using testing::correct_batch;
using testing::cuda_backend_linked;
using testing::cuda_device_usable;
using testing::header;
using testing::make_seq;

BatchCheck check_cpu(const SampledBatch& b, ValidatorSettings s = {}, const BatchFileHeader& h = header()) {
  s.device = ValidateDevice::kCpu;
  const testing::TestBackends backends;
  return Validator(s, h, backends.all()).check(b, 0);
}

// ---- content ------------------------------------------------------------------------------

TEST(ValidateContent, EqualIdentitiesGiveBitIdenticalValues) {
  for (std::int32_t h = 0; h < 4; ++h) {
    for (std::int32_t d = 0; d < 64; ++d) {
      const float a = kv_value(7, KvPart::kKey, "h123", 5, h, d);
      const float b = content_value(kv_token_seed(7, KvPart::kKey, hash_origin(std::string("h") + "123"), 5), h, d);
      EXPECT_EQ(std::bit_cast<std::uint32_t>(a), std::bit_cast<std::uint32_t>(b));
    }
  }
}

TEST(ValidateContent, DifferentFieldsGiveDifferentValues) {
  const float base = kv_value(0, KvPart::kKey, "p1", 3, 0, 0);
  EXPECT_NE(base, kv_value(0, KvPart::kValue, "p1", 3, 0, 0));
  EXPECT_NE(base, kv_value(0, KvPart::kKey, "p2", 3, 0, 0));
  EXPECT_NE(base, kv_value(0, KvPart::kKey, "p1", 4, 0, 0));
  EXPECT_NE(base, kv_value(0, KvPart::kKey, "p1", 3, 1, 0));
  EXPECT_NE(base, kv_value(0, KvPart::kKey, "p1", 3, 0, 1));
  EXPECT_NE(base, kv_value(1, KvPart::kKey, "p1", 3, 0, 0));
  EXPECT_NE(query_value(0, 1, 0, 5, 0, 0), query_value(0, 1, 1, 5, 0, 0));
  EXPECT_NE(query_value(0, 1, 0, 5, 0, 0), query_value(0, 1, 0, 6, 0, 0));
}

TEST(ValidateContent, UniformInMinusOneToOne) {
  double sum = 0, sum_sq = 0;
  float lo = 1, hi = -1;
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    const float v = kv_value(3, KvPart::kValue, "b9", i, i % 7, i % 64);
    ASSERT_GE(v, -1.0f);
    ASSERT_LT(v, 1.0f);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
    sum_sq += static_cast<double>(v) * v;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(sum_sq / n, 1.0 / 3.0, 0.01);  // variance of U(-1, 1)
  EXPECT_LT(lo, -0.999f);
  EXPECT_GT(hi, 0.999f);
}

// ---- the correct batch and planted faults ------------------------------------------------

TEST(ValidateValidator, CorrectBatchWithSharedPrefixAndForkPasses) {
  const BatchCheck c = check_cpu(correct_batch());
  EXPECT_TRUE(c.passed) << c.error << " max err " << c.max_abs_error;
  EXPECT_TRUE(c.error.empty());
  EXPECT_EQ(c.sequences, 4);
  EXPECT_EQ(c.kv_tokens, 10 + 13 + 9 + 9);
  EXPECT_EQ(c.query_tokens, 4);
  EXPECT_TRUE(c.decode);
  EXPECT_EQ(c.nonfinite, 0);
  EXPECT_EQ(c.violations, 0);
  EXPECT_LT(c.max_abs_error, 1e-6);
  EXPECT_GT(c.max_abs_ref, 0.01);
  EXPECT_EQ(c.iteration, 42);
}

TEST(ValidateValidator, CorruptedBlockTableFails) {
  // r2's third block points at r1's tail block 9: r2 (later in batch order) overwrites
  // r1's tokens 8 and 9.
  SampledBatch b = correct_batch();
  b.sequences[1].block_table[2] = 9;
  const BatchCheck c = check_cpu(b);
  EXPECT_FALSE(c.passed);
  EXPECT_TRUE(c.error.empty()) << c.error;
  EXPECT_GT(c.max_abs_error, 1e-3);
  EXPECT_EQ(c.worst_request, 1u);
  EXPECT_EQ(c.worst_position, 9);
}

TEST(ValidateValidator, MissingCopyOnWriteFails) {
  // Seq 0 of r3 writes its branch tokens into the still-shared block 21: seq 1's tokens
  // land in the same slots.
  SampledBatch b = correct_batch();
  b.sequences[2].block_table[1] = 21;
  const BatchCheck c = check_cpu(b);
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.worst_request, 3u);
  EXPECT_EQ(c.worst_seq, 0u);
}

TEST(ValidateValidator, BadPrefixHitFails) {
  // r4's first prompt block has another identity (h200) but the allocator handed it r1's
  // cached block 3.
  SampledBatch b = correct_batch();
  b.sequences.push_back(make_seq(4, 0, {3, 40}, {{"h200", 0, 4}, {"p4", 4, 3}}));
  const BatchCheck c = check_cpu(b);
  EXPECT_FALSE(c.passed);
  EXPECT_GT(c.violations, 0);
  // r1 and r2 (written earlier) now read h200's K/V in block 3.
  EXPECT_TRUE(c.worst_request == 1u || c.worst_request == 2u) << c.worst_request;
}

TEST(ValidateValidator, BlockReusedWhileReferencedFailsWhicheverComesFirst) {
  // r5 still references block 31; r6 got it from the free list.
  const auto victim = make_seq(5, 0, {30, 31}, {{"p5", 0, 7}});
  const auto reuser = make_seq(6, 0, {31, 32}, {{"p6", 0, 6}});
  SampledBatch victim_first;
  victim_first.sequences = {victim, reuser};
  BatchCheck c = check_cpu(victim_first);
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.worst_request, 5u);  // r6 wrote last; r5 reads r6's tokens
  SampledBatch reuser_first;
  reuser_first.sequences = {reuser, victim};
  c = check_cpu(reuser_first);
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.worst_request, 6u);  // r5 wrote last; r6 reads r5's tokens
  // Without the conflict (r6 on a block of its own) both pass.
  SampledBatch fixed;
  fixed.sequences = {victim, make_seq(6, 0, {33, 32}, {{"p6", 0, 6}})};
  EXPECT_TRUE(check_cpu(fixed).passed);
}

TEST(ValidateValidator, SingleWrongTokenInALongContextIsCaught) {
  // 2000 tokens of context, one of them (the last) overwritten by another sequence.
  std::vector<std::int32_t> blocks;
  for (std::int32_t i = 0; i < 125; ++i) blocks.push_back(100 + i);  // 125 blocks of 16
  SampledBatch b;
  b.sequences.push_back(make_seq(1, 0, blocks, {{"p1", 0, 2000}}));
  b.sequences.push_back(make_seq(2, 0, {300, 301}, {{"p2", 0, 16}, {"b2", 0, 1}}));
  EXPECT_TRUE(check_cpu(b, {}, header(16, 1000)).passed);
  b.sequences[1].block_table[1] = 100 + 124;  // r2's token 16 lands on r1's token 1984
  const BatchCheck c = check_cpu(b, {}, header(16, 1000));
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.worst_request, 1u);
}

// ---- long prompts -----------------------------------------------------------------------------

// Bytes of address space this process has mapped (VmSize of /proc/self/status); unused under
// sanitizers, whose reservations make it meaningless (below).
[[maybe_unused]] std::int64_t address_space_bytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    std::int64_t kib = 0;
    if (key == "VmSize:" && status >> kib) return kib * 1024;
    status.ignore(1 << 20, '\n');
  }
  return -1;
}

// One whole prompt of `tokens` tokens prefilled at once (what `pagesim run` samples for a
// long prompt), blocks of 16 in order.
SampledBatch long_prefill(std::int64_t tokens) {
  std::vector<std::int32_t> blocks;
  for (std::int64_t i = 0; i < (tokens + 15) / 16; ++i) blocks.push_back(static_cast<std::int32_t>(i));
  SampledBatch b;
  b.sequences.push_back(make_seq(1, 0, blocks, {{"p1", 0, tokens}}, tokens));
  return b;
}

// An 8,192-token prefill is checked within 128 MiB more address space than the process has:
// both the paged reference and the dense ground truth work tile by tile (online softmax over
// key tiles, a tile of queries at a time), so their scratch does not grow with the prompt.
// Computed whole, the dense score matrix alone was 16,384 rows x 8,192 keys of doubles (1 GiB).
// Run in a child process under RLIMIT_AS; exit status 0 = passed, 1 = failed, 2 = out of memory.
// Under AddressSanitizer (PAGESIM_SANITIZE_BUILD), which reserves terabytes of address space,
// a shorter prompt is checked in this process, without the limit.
TEST(ValidateValidator, LongPrefillRunsInMemoryBoundedByTheTiles) {
  ValidatorSettings s;
  s.num_q_heads = 2;  // GQA, kept small so the test takes seconds: the memory is what it checks
  s.num_kv_heads = 1;
  s.head_dim = 16;
#if defined(PAGESIM_SANITIZE_BUILD)
  const BatchCheck c = check_cpu(long_prefill(1000), s, header(16, 64));
  EXPECT_TRUE(c.passed) << c.error << " max err " << c.max_abs_error;
#else
  const std::int64_t tokens = 8192;
  const SampledBatch batch = long_prefill(tokens);
  const BatchFileHeader h = header(16, tokens / 16);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int status = 3;
    try {
      const std::int64_t limit = address_space_bytes() + (std::int64_t{128} << 20);
      const rlimit rl{static_cast<rlim_t>(limit), static_cast<rlim_t>(limit)};
      if (::setrlimit(RLIMIT_AS, &rl) == 0) status = check_cpu(batch, s, h).passed ? 0 : 1;
    } catch (const std::bad_alloc&) {
      status = 2;
    }
    ::_exit(status);
  }
  int raw = 0;
  ASSERT_EQ(::waitpid(pid, &raw, 0), pid);
  ASSERT_TRUE(WIFEXITED(raw)) << "the child was killed (signal " << (WIFSIGNALED(raw) ? WTERMSIG(raw) : 0) << ")";
  EXPECT_NE(WEXITSTATUS(raw), 2) << "validating " << tokens << " tokens ran out of 128 MiB of address space";
  EXPECT_NE(WEXITSTATUS(raw), 3) << "setrlimit(RLIMIT_AS) failed";
  EXPECT_EQ(WEXITSTATUS(raw), 0) << "the long prefill did not pass";
#endif
}

// ---- shapes, block sizes, prefill -----------------------------------------------------------

struct Shape {
  std::int32_t q_heads, kv_heads, head_dim;
};

class ValidateValidatorShapes : public ::testing::TestWithParam<Shape> {};

TEST_P(ValidateValidatorShapes, CorrectPassesAndFaultFails) {
  ValidatorSettings s;
  s.num_q_heads = GetParam().q_heads;
  s.num_kv_heads = GetParam().kv_heads;
  s.head_dim = GetParam().head_dim;
  EXPECT_TRUE(check_cpu(correct_batch(), s).passed);
  SampledBatch b = correct_batch();
  b.sequences[2].block_table[1] = 21;
  EXPECT_FALSE(check_cpu(b, s).passed);
}

INSTANTIATE_TEST_SUITE_P(Heads, ValidateValidatorShapes,
                         ::testing::Values(Shape{4, 2, 64},    // GQA (default)
                                           Shape{4, 4, 64},    // MHA
                                           Shape{8, 1, 64},    // MQA
                                           Shape{6, 3, 40},    // odd head size (CPU only)
                                           Shape{2, 2, 128}));

TEST(ValidateValidator, BlockSizeOneContiguousRanges) {
  // Contiguous allocators export block size 1: one block id per token.
  auto range = [](std::int32_t first, std::int32_t n) {
    std::vector<std::int32_t> ids;
    for (std::int32_t i = 0; i < n; ++i) ids.push_back(first + i);
    return ids;
  };
  SampledBatch b;
  b.sequences.push_back(make_seq(1, 0, range(0, 12), {{"p1", 0, 9}, {"b1", 0, 3}}));
  b.sequences.push_back(make_seq(2, 0, range(16, 5), {{"p2", 0, 5}}));
  b.sequences.push_back(make_seq(3, 0, range(21, 1), {{"p3", 0, 1}}));  // kv_len 1
  const BatchFileHeader h = header(1, 64);
  EXPECT_TRUE(check_cpu(b, {}, h).passed);
  // Overlapping ranges: r2's range starts inside r1's.
  b.sequences[1].block_table = range(10, 5);
  const BatchCheck c = check_cpu(b, {}, h);
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.worst_request, 1u);
}

TEST(ValidateValidator, BuddyBlockSixteenRanges) {
  // Buddy placement exports block size 16 with block-aligned ranges of consecutive blocks.
  SampledBatch b;
  b.sequences.push_back(make_seq(1, 0, {0, 1, 2, 3}, {{"p1", 0, 40}, {"b1", 0, 9}}));
  b.sequences.push_back(make_seq(2, 0, {4, 5}, {{"p2", 0, 20}}));
  EXPECT_TRUE(check_cpu(b, {}, header(16, 128)).passed);
}

TEST(ValidateValidator, PrefillWithHistoryAndMixedBatch) {
  SampledBatch b = correct_batch();
  // Chunked prefill of r7: 5 new tokens after 8 cached ones; r8: a whole 11-token prompt.
  b.sequences.push_back(make_seq(7, 0, {50, 51, 52, 53}, {{"p7", 0, 13}}, 5));
  b.sequences.push_back(make_seq(8, 0, {54, 55, 56}, {{"p8", 0, 11}}, 11));
  const BatchCheck c = check_cpu(b);
  EXPECT_TRUE(c.passed) << c.error << " " << c.max_abs_error;
  EXPECT_FALSE(c.decode);
  EXPECT_EQ(c.query_tokens, 4 + 5 + 11);
  // A fault visible only to prefill queries: r8's second block is r7's last.
  b.sequences.back().block_table[1] = 53;
  const BatchCheck f = check_cpu(b);
  EXPECT_FALSE(f.passed);
  EXPECT_EQ(f.worst_request, 7u);
}

TEST(ValidateValidator, LengthsAtBlockBoundaries) {
  SampledBatch b;
  std::int32_t next = 0;
  std::uint64_t r = 0;
  for (const std::int64_t len : {1, 3, 4, 5, 8, 9, 16}) {
    std::vector<std::int32_t> blocks;
    for (std::int64_t i = 0; i < (len + 3) / 4; ++i) blocks.push_back(next++);
    blocks.push_back(next++);  // a spare entry past the last needed block is never read
    ++r;  // before the call: its arguments are evaluated in no fixed order
    b.sequences.push_back(make_seq(r, 0, blocks, {{"p" + std::to_string(r), 0, len}}, len == 16 ? 4 : 1));
  }
  const BatchCheck c = check_cpu(b);
  EXPECT_TRUE(c.passed) << c.error << " " << c.max_abs_error;
  EXPECT_FALSE(c.decode);  // the 16-token sequence has 4 queries
}

TEST(ValidateValidator, QueryLenZeroAndEmptyBatch) {
  SampledBatch b;
  b.sequences.push_back(make_seq(1, 0, {0, 1}, {{"p1", 0, 6}}, 0));
  const BatchCheck c = check_cpu(b);
  EXPECT_TRUE(c.passed) << c.error;
  EXPECT_EQ(c.query_tokens, 0);
  b.sequences.push_back(make_seq(2, 0, {2, 3}, {{"p2", 0, 6}}, 2));
  EXPECT_TRUE(check_cpu(b).passed);
  EXPECT_TRUE(check_cpu(SampledBatch{}).passed);
}

TEST(ValidateValidator, SixteenBitStorageOnTheCpu) {
  for (const kernels::DType t : {kernels::DType::kFloat16, kernels::DType::kBFloat16}) {
    ValidatorSettings s;
    s.dtype = t;
    EXPECT_TRUE(check_cpu(correct_batch(), s).passed) << kernels::dtype_name(t);
    SampledBatch b = correct_batch();
    b.sequences[1].block_table[2] = 9;
    EXPECT_FALSE(check_cpu(b, s).passed) << kernels::dtype_name(t);
  }
}

TEST(ValidateValidator, DeterministicPerSeed) {
  SampledBatch b = correct_batch();
  b.sequences[1].block_table[2] = 9;
  ValidatorSettings s;
  const BatchCheck a1 = check_cpu(b, s);
  const BatchCheck a2 = check_cpu(b, s);
  EXPECT_EQ(a1.max_abs_error, a2.max_abs_error);
  s.seed = 99;
  const BatchCheck a3 = check_cpu(b, s);
  EXPECT_NE(a1.max_abs_error, a3.max_abs_error);
  EXPECT_FALSE(a3.passed);
}

// ---- batch problems and settings -------------------------------------------------------------

TEST(ValidateValidator, BlockIdOutsideThePoolIsABatchError) {
  SampledBatch b = correct_batch();
  b.sequences[3].block_table[2] = 64;  // header: 64 blocks
  const BatchCheck c = check_cpu(b);
  EXPECT_FALSE(c.passed);
  EXPECT_NE(c.error.find("block_table[2] = 64 is outside [0, 64)"), std::string::npos) << c.error;
  EXPECT_NE(c.error.find("request 3, seq 1"), std::string::npos) << c.error;
  b.sequences[3].block_table[2] = -1;
  EXPECT_NE(check_cpu(b).error.find("= -1 is outside"), std::string::npos);
}

// ---- windowed layer groups ----------------------------------------------------------------

BatchFileHeader windowed_header(kernels::MaskKind kind, std::int32_t window) {
  BatchFileHeader h = header();
  h.mask = {kind, window};
  return h;
}

TEST(ValidateValidator, SlidingWindowBatchWithFreedBlocksPasses) {
  // Window 5, blocks of 4: r1 (kv_len 10, decode at 9) attends keys 5..9, blocks 1 and 2;
  // r3's sequences (kv_len 9, at 8) keys 4..8, blocks 1 and 2. Their block 0 was freed.
  SampledBatch b = correct_batch();
  b.sequences[0].block_table[0] = -1;
  b.sequences[2].block_table[0] = -1;
  b.sequences[3].block_table[0] = -1;
  const BatchFileHeader h = windowed_header(kernels::MaskKind::kSlidingWindow, 5);
  const BatchCheck c = check_cpu(b, {}, h);
  EXPECT_TRUE(c.passed) << c.error << " max err " << c.max_abs_error;
  // A stale entry out of the window pointing at another sequence's block is not read either.
  b.sequences[0].block_table[0] = 12;
  EXPECT_TRUE(check_cpu(b, {}, h).passed);
  // The same batch under the causal mask reads block 0: a batch error naming the entry.
  b.sequences[0].block_table[0] = -1;
  EXPECT_NE(check_cpu(b).error.find("block_table[0] = -1 is outside"), std::string::npos);
}

TEST(ValidateValidator, FreedBlockInsideTheWindowIsNamed) {
  // Block 1 of r1 holds keys 4..7; window 5 at position 9 attends 5..9, so it must be there.
  SampledBatch b = correct_batch();
  b.sequences[0].block_table[1] = -1;
  const BatchCheck c = check_cpu(b, {}, windowed_header(kernels::MaskKind::kSlidingWindow, 5));
  EXPECT_FALSE(c.passed);
  EXPECT_NE(c.error.find("block_table[1] = -1 is outside [0, 64) (num_blocks of the file header), yet the window "
                         "attends blocks 1..2"),
            std::string::npos)
      << c.error;
}

TEST(ValidateValidator, WindowedBatchStillCatchesAWrongBlock) {
  // r2's third block (in its window) points at r1's tail block 9: r2 overwrites r1's keys.
  SampledBatch b = correct_batch();
  b.sequences[1].block_table[2] = 9;
  const BatchCheck c = check_cpu(b, {}, windowed_header(kernels::MaskKind::kSlidingWindow, 6));
  EXPECT_FALSE(c.passed);
  EXPECT_TRUE(c.error.empty()) << c.error;
  EXPECT_EQ(c.worst_request, 1u);
}

TEST(ValidateValidator, ChunkedLocalBatchPasses) {
  // Chunks of 8: r1 at 9 attends 8..9 (block 2), r2 at 12 attends 8..12 (blocks 2, 3),
  // r3 at 8 attends 8 (block 2): blocks 0 and 1 freed everywhere.
  SampledBatch b = correct_batch();
  for (SampledSequence& s : b.sequences) s.block_table[0] = s.block_table[1] = -1;
  const BatchCheck c = check_cpu(b, {}, windowed_header(kernels::MaskKind::kChunkedLocal, 8));
  EXPECT_TRUE(c.passed) << c.error << " max err " << c.max_abs_error;
}

TEST(ValidateValidator, ToleranceSettings) {
  const testing::TestBackends backends;
  EXPECT_EQ(Validator(ValidatorSettings{}, header(), backends.all()).tolerance().atol, 1e-6);
  ValidatorSettings s;
  s.atol = 10.0;  // accepts anything finite
  SampledBatch b = correct_batch();
  b.sequences[1].block_table[2] = 9;
  EXPECT_TRUE(check_cpu(b, s).passed);
  s.atol = -1.0;
  EXPECT_THROW(Validator(s, header(), backends.all()), ValidateError);
  const Tolerance f16 = default_tolerance(ValidateDevice::kCuda, kernels::DType::kFloat16);
  EXPECT_GT(f16.atol, default_tolerance(ValidateDevice::kCuda, kernels::DType::kFloat32).atol);
}

TEST(ValidateValidator, RefusesBadSettings) {
  const testing::TestBackends backends;
  ValidatorSettings s;
  s.num_q_heads = 6;
  s.num_kv_heads = 4;
  EXPECT_THROW(Validator(s, header(), backends.all()), ValidateError);
  s = {};
  s.head_dim = 0;
  EXPECT_THROW(Validator(s, header(), backends.all()), ValidateError);
  s = {};
  s.dtype = kernels::DType::kInt32;
  EXPECT_THROW(Validator(s, header(), backends.all()), ValidateError);
  EXPECT_THROW(parse_validate_device("gpu", "--device"), ValidateError);
  EXPECT_THROW(parse_kv_dtype("f64", "--dtype"), ValidateError);
  EXPECT_EQ(parse_kv_dtype("bf16", "--dtype"), kernels::DType::kBFloat16);
}

TEST(ValidateValidator, CudaRefusalsNameTheReason) {
  const testing::TestBackends backends;
  ValidatorSettings s;
  s.device = ValidateDevice::kCuda;
  try {
    Validator v(s, header(12, 64), backends.all());
    if (!cuda_device_usable(nullptr)) FAIL() << "expected a refusal without a usable device";
  } catch (const ValidateError& e) {
    const std::string m = e.what();
    if (!cuda_backend_linked()) {
      EXPECT_NE(m.find("built without CUDA"), std::string::npos) << m;
    } else {
      EXPECT_NE(m.find("block size 12"), std::string::npos) << m;  // checked before the device
    }
  }
  if (cuda_backend_linked()) {
    s.head_dim = 40;
    try {
      Validator v(s, header(16, 64), backends.all());
      FAIL() << "head_dim 40 must be refused on cuda";
    } catch (const ValidateError& e) {
      EXPECT_NE(std::string(e.what()).find("head_dim 40"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace pagesim::sim

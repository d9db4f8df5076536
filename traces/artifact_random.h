// The random streams of the vLLM paper's artifact (sosp-ae-astra benchmark/trace.py), bit for
// bit, so that pagesim can replay the exact workload behind the paper's figures:
//   np.random.seed(seed); np.random.poisson(lam, size)   -> NumpyLegacyRandom::poisson
//   random.seed(seed); random.shuffle(rows)              -> CpythonRandom::shuffle
// Both are MT19937. NumPy's legacy RandomState seeds it with init_genrand(seed) and makes a
// double from two 32-bit outputs; CPython seeds it with init_by_array(32-bit words of |seed|)
// and draws shuffle positions by rejection from getrandbits(). The golden values in
// tests/traces/artifact_random_test.cpp come from NumPy 1.24 and CPython 3.11
// (tests/traces/artifact_random_golden.py). Not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace pagesim::traces {

// The Mersenne Twister MT19937 with both of its reference seeding procedures.
class Mt19937 {
 public:
  explicit Mt19937(std::uint32_t seed) { init_genrand(seed); }
  explicit Mt19937(std::span<const std::uint32_t> key);  // init_by_array(key)

  std::uint32_t next_u32();

 private:
  void init_genrand(std::uint32_t seed);
  void twist();

  std::array<std::uint32_t, 624> mt_{};
  std::size_t pos_ = 624;  // next word of mt_ to temper; 624 = twist first
};

// numpy.random.RandomState(seed) restricted to what the artifact calls.
class NumpyLegacyRandom {
 public:
  explicit NumpyLegacyRandom(std::uint32_t seed) : mt_(seed) {}

  // random_sample(): a double in [0, 1) with 53 random bits.
  double random();
  // poisson(lam) for 0 <= lam < 10 (NumPy's multiplication method; at 10 and above NumPy
  // switches to PTRS, which is not reproduced). REQUIRES: 0 <= lam < 10.
  std::int64_t poisson(double lam);

 private:
  Mt19937 mt_;
};

// CPython's random.Random(seed) restricted to what the artifact calls.
class CpythonRandom {
 public:
  explicit CpythonRandom(std::uint64_t seed);

  // getrandbits(k) for 1 <= k <= 32.
  std::uint32_t getrandbits(int k);
  // _randbelow(n): uniform in [0, n) by rejection. REQUIRES: 1 <= n < 2^32.
  std::uint64_t randbelow(std::uint64_t n);
  // random.shuffle(items): Fisher-Yates from the last position down.
  // REQUIRES: items.size() < 2^32.
  template <typename T>
  void shuffle(std::vector<T>& items) {
    for (std::size_t i = items.size(); i > 1; --i) {
      std::swap(items[i - 1], items[static_cast<std::size_t>(randbelow(i))]);
    }
  }

 private:
  Mt19937 mt_;
};

}  // namespace pagesim::traces

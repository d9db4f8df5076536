// sort_doubles: sorts a run's latencies (millions of doubles) for exact percentiles, in O(n),
// with the result std::sort gives.
//
// A least-significant-digit radix sort of the doubles' bits, mapped to unsigned keys that
// order as the values do (negatives' bits flipped, positives' sign bit set), 8 bits a pass
// below 2,048 values and 11 from there (the passes' counts are a fixed cost that a few
// hundred values must repay); a pass whose digit every key shares is skipped, so latencies
// of similar magnitude need a few fewer. Equal values have equal bits, so the sequence is
// the one any correct sort gives (and the sums over it the same) — except -0.0 and +0.0,
// which compare equal but whose order sorting leaves open; the radix sort puts -0.0 first.
// A span holding a NaN, or shorter than 64 values, goes to std::sort. Needs n doubles of
// scratch.
#pragma once

#include <span>

namespace pagesim::sim {

// Sorts `values` ascending (std::sort's order up to the signs of zeros, above).
void sort_doubles(std::span<double> values);

}  // namespace pagesim::sim

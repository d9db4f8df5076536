// Error types of the allocator layer.
//
// AllocatorError: the caller broke the API contract or gave a bad setting (unknown or
// duplicate sequence id, double free, zero capacity, block size not a power of two). The
// message names the parameter or sequence and what was expected. Running out of memory is
// NOT an error: it is reported through return values (see kv_allocator.h).
//
// InvariantViolation: validate() found internal state that breaks a documented identity.
// It always means a bug in the allocator, never bad input.
#pragma once

#include <stdexcept>
#include <string>

namespace pagesim::alloc {

class AllocatorError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class InvariantViolation : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

}  // namespace pagesim::alloc

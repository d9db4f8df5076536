// The paged allocator's two error channels, shared by its source files (paged_allocator*.cpp,
// one per concern): misuse by the caller throws AllocatorError, a broken internal identity
// InvariantViolation, each message naming the paged allocator. Internal to paged/.
#pragma once

#include <string>
#include <string_view>

#include "allocator/allocator_error.h"
#include "allocator/kv_allocator.h"

namespace pagesim::alloc::paged_detail {

// How the paged allocator's messages begin (KvAllocator::misuse_prefix too).
inline constexpr std::string_view kName = "paged allocator";

[[noreturn]] inline void misuse(const std::string& what) { throw AllocatorError(std::string(kName) + ": " + what); }

[[noreturn]] inline void broken(const std::string& what) {
  throw InvariantViolation(std::string(kName) + ": " + what);
}

}  // namespace pagesim::alloc::paged_detail

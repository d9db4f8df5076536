// The paged allocator's two error channels, shared by its source files (paged_allocator*.cpp,
// one per concern): misuse by the caller throws AllocatorError, a broken internal identity
// InvariantViolation, each message naming the paged allocator. Internal to paged/.
#pragma once

#include <string>

#include "allocator/allocator_error.h"
#include "allocator/kv_allocator.h"

namespace pagesim::alloc::paged_detail {

inline std::string seq_name(SeqId seq) { return "sequence " + std::to_string(seq); }

[[noreturn]] inline void misuse(const std::string& what) { throw AllocatorError("paged allocator: " + what); }

[[noreturn]] inline void broken(const std::string& what) { throw InvariantViolation("paged allocator: " + what); }

}  // namespace pagesim::alloc::paged_detail

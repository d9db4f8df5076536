// Test support for the randomized allocator tests: one random misuse that every KvAllocator
// must refuse with AllocatorError (freeing, appending to or forking an unknown sequence;
// admitting a live one again, forking onto a live one, a negative append; a prompt of 0
// tokens), and the check that the refusal left the memory breakdown as it was. Stateless.
#pragma once

#include <gtest/gtest.h>

#include "allocator/allocator_error.h"
#include "allocator/kv_allocator.h"

namespace pagesim::alloc::test_support {

// Tries misuse number `kind` (0-4) on `allocator`. `unknown` is an id no sequence has,
// `next_id` the next unused one, `any_live` (when `has_live`) returns a random live
// sequence and `request` a random admission for an id; both may draw from the test's
// generator, in the order the calls are written here.
template <class Allocator, class AnyLive, class Request>
void expect_misuse_refused(Allocator& allocator, int kind, SeqId unknown, SeqId next_id, bool has_live,
                           AnyLive any_live, Request request) {
  const MemoryBreakdown before = allocator.breakdown();
  switch (kind) {
    case 0: EXPECT_THROW(allocator.free(unknown), AllocatorError); break;
    case 1: EXPECT_THROW(allocator.append(unknown, 1), AllocatorError); break;
    case 2: EXPECT_THROW(allocator.fork(unknown, next_id), AllocatorError); break;
    case 3:
      if (has_live) {
        EXPECT_THROW(allocator.admit(request(any_live())), AllocatorError);
        EXPECT_THROW(allocator.fork(any_live(), any_live()), AllocatorError);
        EXPECT_THROW(allocator.append(any_live(), -1), AllocatorError);
      }
      break;
    default: {
      AdmitRequest bad = request(next_id);
      bad.prompt_tokens = 0;
      EXPECT_THROW(allocator.admit(bad), AllocatorError);
    }
  }
  ASSERT_EQ(allocator.breakdown(), before);
}

}  // namespace pagesim::alloc::test_support

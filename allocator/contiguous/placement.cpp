#include "allocator/contiguous/placement.h"

#include "allocator/allocator_error.h"

namespace pagesim::alloc {

std::string_view to_string(PlacementKind kind) {
  switch (kind) {
    case PlacementKind::kBuddy: return "buddy";
    case PlacementKind::kFirstFit: return "first_fit";
    case PlacementKind::kBestFit: return "best_fit";
  }
  return "?";  // unreachable: every kind is handled above
}

PlacementKind parse_placement_kind(std::string_view text) {
  for (PlacementKind kind :
       {PlacementKind::kBuddy, PlacementKind::kFirstFit, PlacementKind::kBestFit}) {
    if (text == to_string(kind)) return kind;
  }
  throw AllocatorError("placement policy \"" + std::string(text) +
                       "\": unknown policy; expected one of: buddy, first_fit, best_fit");
}

}  // namespace pagesim::alloc

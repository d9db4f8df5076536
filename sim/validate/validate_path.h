// `pagesim validate PATH`: what the command checks when PATH is not a batches file itself.
// A run's folder holds its batches.jsonl; a sweep's folder holds one per point, in its
// NN-label point folders. run_validate_path() runs run_validate_command() (validate_command.h)
// on each, then, for a sweep, prints one summary line per point and a total. Stateless; reads
// the file system.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "sim/validate/paged_attention_backend.h"
#include "sim/validate/validate_command.h"

namespace pagesim::sim {

// The batches files under `path`, in the order they are checked.
struct ValidateTargets {
  struct Point {
    std::string folder;            // "03-allocator.block_size=32"; "" for a file or a run folder
    std::filesystem::path batches;  // its batches.jsonl; empty when the point wrote none
  };
  std::vector<Point> points;
  bool sweep = false;  // `path` is a sweep's folder (each point its own folder)
};

// `path` itself when it is a file; a folder's batches.jsonl when it has one (a run); else
// every subfolder named NN-label (a sweep's points, in point order), with or without a
// batches.jsonl. Throws ValidateError naming the folder when it holds no batches.jsonl at all,
// or when `path` does not exist.
ValidateTargets validate_targets(const std::filesystem::path& path);

// Validates every batches file of validate_targets(options.file) with run_validate_command()
// and returns 0 when all pass; 1 when any fails, or on an error (one line on `err`). A sweep
// prints, after the points' own tables, "point NN-label: PASS" (FAIL, or "no batches.jsonl")
// per point and "sweep: P of N points pass ...". REQUIRES: the backends outlive the call.
int run_validate_path(const ValidateOptions& options, const PagedAttentionBackends& backends, std::ostream& out,
                      std::ostream& err);

}  // namespace pagesim::sim

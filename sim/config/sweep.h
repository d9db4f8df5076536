// Sweeps: one experiment file, many runs. The `sweep:` section of an experiment lists
//   key.path: [v1, v2, ...]   a grid axis (the cartesian product of all axes is run)
//   cases: [{label: x, key.path: v, ...}, ...]   named combinations (each crossed with the grid)
// expand_sweep() turns a file's root into one YAML root per point, each with its overrides
// applied. Pure function of its input.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace pagesim::sim {

struct SweepPoint {
  std::string label;  // "orca-max", "allocator.block_size=32", ...; unique within a sweep
  std::vector<std::pair<std::string, std::string>> assignments;  // (key path, value as YAML text)
  YAML::Node root;    // the experiment with the assignments applied (no sweep section)
};

// Empty when `root` has no sweep section. Throws ConfigError naming the file and line for a
// malformed sweep section.
std::vector<SweepPoint> expand_sweep(const YAML::Node& root, const std::string& file);

// The swept key paths in order of first appearance (cases first, then grid axes).
std::vector<std::string> swept_keys(const std::vector<SweepPoint>& points);

}  // namespace pagesim::sim

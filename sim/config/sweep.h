// Sweep: one experiment file, many runs. The `sweep:` section of an experiment lists
//   key.path: [v1, v2, ...]   a grid axis (the cartesian product of all axes is run)
//   cases: [{label: x, key.path: v, ...}, ...]   named combinations (each crossed with the grid)
// Points are numbered case-major, then the grid with the last axis fastest.
//
// A Sweep holds the file once and the sweep's values once; a point is only its index. Its
// label, assignments, YAML root and parsed config are made when asked for, so expanding a
// sweep costs O(cases + axis values), whatever the number of points, and a point's YAML
// lives only while it is read. (Keeping one YAML tree per point cost quadratic time and
// memory: yaml-cpp merges the memory of every tree that shares a node, so each new point's
// tree took in all the earlier ones.)
//
// Lines: a point's root is the file re-read without its sweep section (so the file's keys
// keep their lines) plus fresh copies of the swept values; config() puts the lines of the
// swept values back into the config's origin and into its parse errors.
//
// Not safe across threads: every method reads the sweep's shared YAML nodes, which
// yaml-cpp does not allow to be read concurrently. Callers serialise (ExperimentConfig
// values, once made, are independent).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sim/config/config_error.h"
#include "sim/config/experiment_config.h"

namespace pagesim::sim {

// The value at the dotted `key` of `root` as labels and sweep.csv write a swept value (a
// scalar's text, else flow YAML), or nullopt when `root` does not hold it.
std::optional<std::string> value_text_at(const YAML::Node& root, const std::string& key);

class Sweep {
 public:
  // Reads the experiment in `text` (from `file`, used in messages) with the --set
  // `overrides` applied in order. An override of `sweep.<key.path>` replaces (or adds) that
  // grid axis, `sweep.cases` the cases, `sweep` the whole section. Throws ConfigError for a
  // YAML syntax error, a malformed override or sweep section (file:line), and for an
  // override of a key the sweep also varies (naming both).
  static Sweep from_text(const std::string& text, const std::string& file,
                         const std::vector<std::string>& overrides = {});
  // The same for the file `file` (ConfigError when it cannot be read).
  static Sweep from_file(const std::string& file, const std::vector<std::string>& overrides = {});

  // False when the experiment has no sweep section: then it is one run, point 0, with no
  // label and no assignments.
  bool swept() const { return swept_; }
  // Number of points (1 without a sweep).
  std::size_t size() const { return size_; }

  // "orca-max", "allocator.block_size=32", ...; unique within a sweep; empty without one.
  // REQUIRES: index < size().
  std::string label(std::size_t index) const;
  // (key path, value as YAML text) for each swept key of the point, cases' keys first.
  std::vector<std::pair<std::string, std::string>> assignments(std::size_t index) const;
  // The swept key paths in order of first appearance (cases first, then grid axes).
  std::vector<std::string> keys() const;
  // Whether the sweep lists cases (sweep.cases); then case_label() names each point's case.
  bool has_cases() const { return swept_ && !cases_.front().label.empty(); }
  // The label of point `index`'s case ("" without cases). REQUIRES: index < size().
  std::string case_label(std::size_t index) const { return has_cases() ? cases_[index / grid_size_].label : ""; }

  // The point's experiment as YAML (no sweep section). A new tree at each call.
  YAML::Node root(std::size_t index) const;
  // The point's parsed config, its origin naming the lines of the file and of the swept
  // values. Throws ConfigError as parse_experiment() does, at the swept value's line.
  ExperimentConfig config(std::size_t index) const;

  // `error`, raised while checking or building point `index`, with the point's label and
  // assignments appended to its message (same line and key). An error without a line on a
  // key a --set gave is the option's: its file is "--set key.path=value".
  ConfigError in_point(std::size_t index, const ConfigError& error) const;

 private:
  // One swept value: a detached copy (no marks, its own memory) and the lines its parts
  // had in the file, by path below the key ("" for the value, ".rate", "[1].n").
  struct Value {
    YAML::Node node;
    std::string text;  // as the label and sweep.csv show it
    std::vector<std::pair<std::string, int>> lines;
  };
  struct Assignment {
    std::string key;
    Value value;
  };
  struct Case {
    std::string label;
    std::vector<Assignment> sets;
  };
  struct Axis {
    std::string key;
    std::vector<Value> values;
  };

  struct Applied {
    const std::string* key;
    const Value* value;
    const char* origin;  // for set_path's messages
  };
  // The point's assignments, in the order they are applied (its case's, then the axes').
  std::vector<Applied> applied(std::size_t index) const;
  YAML::Node materialise(const std::vector<Applied>& applied) const;
  // The last --set override ("key.path=value") that gave `key` or a section holding it.
  std::optional<std::string> override_of(const std::string& key) const;
  // The line in the file of swept `key`'s value (0: none, e.g. set by --set).
  static int line_of_swept(const std::vector<Applied>& applied, const std::string& key);

  Sweep() = default;

  std::string file_;
  bool swept_ = false;
  std::size_t size_ = 1;
  std::size_t grid_size_ = 1;
  // The experiment without its sweep section: re-read from base_text_ (the file's text with
  // the sweep's lines blanked, then `overrides_` applied) when that keeps every key, else
  // shared from fallback_root_ (a flow-style file; correct lines, but the points' trees
  // share memory again).
  std::string base_text_;
  std::vector<std::string> overrides_;
  YAML::Node fallback_root_;  // also the whole experiment when it has no sweep
  bool use_text_ = false;
  std::vector<Case> cases_;
  std::vector<Axis> axes_;
};

}  // namespace pagesim::sim

// ConfigError: a bad experiment configuration — an unknown key, a value of the wrong type
// or out of range, a bad --set override. what() names the file, the line (when known) and
// the dotted key path, what was found and what was expected, e.g.
//   experiments/fig2.yaml:12: scheduler.max_num_seqs: expected an integer, found 'many'
#pragma once

#include <stdexcept>
#include <string>

#include <yaml-cpp/exceptions.h>

namespace pagesim::sim {

class ConfigError : public std::runtime_error {
 public:
  // line: 1-based; 0 when unknown (e.g. a key that came from --set).
  ConfigError(const std::string& file, int line, const std::string& key, const std::string& message);

  const std::string& file() const { return file_; }
  int line() const { return line_; }
  const std::string& key() const { return key_; }
  // What was wrong, without the file, line and key.
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  int line_;
  std::string key_;
  std::string message_;
};

// What a yaml-cpp parse error says, in words a user can act on: yaml-cpp reports nesting
// beyond its recursion limit as "bad file", which names neither the cause nor the limit.
std::string describe_yaml_error(const YAML::Exception& e);

}  // namespace pagesim::sim

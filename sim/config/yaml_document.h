// load_yaml_document: an experiment file's text as one YAML document.
//
// yaml-cpp's Load() reads the first document of a stream and drops any after a `---`, so a
// file holding two experiments would run the first and silently ignore the rest. This reads
// the first and refuses a second one that holds anything (an empty one, a trailing `---`, is
// allowed). Pure function.
#pragma once

#include <string>

#include <yaml-cpp/yaml.h>

namespace pagesim::sim {

// The single document of `text` (a null node for an empty text). Throws ConfigError naming
// `file` and the line for a YAML syntax error, or for a second document.
YAML::Node load_yaml_document(const std::string& text, const std::string& file);

}  // namespace pagesim::sim

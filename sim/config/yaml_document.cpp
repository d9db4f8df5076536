#include "sim/config/yaml_document.h"

#include <vector>

#include "sim/config/config_error.h"

namespace pagesim::sim {

YAML::Node load_yaml_document(const std::string& text, const std::string& file) {
  std::vector<YAML::Node> documents;
  try {
    documents = YAML::LoadAll(text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(file, e.mark.line + 1, "", "YAML syntax error: " + describe_yaml_error(e));
  }
  if (documents.size() > 1)
    throw ConfigError(file, documents[1].Mark().line + 1, "",
                      "found a second YAML document (after '---'), expected one experiment per file: put the "
                      "others in files of their own, or make them sweep cases");
  return documents.empty() ? YAML::Node() : documents.front();
}

}  // namespace pagesim::sim

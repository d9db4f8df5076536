#include "sim/config/yaml_document.h"

#include <sstream>

#include <yaml-cpp/eventhandler.h>

#include "sim/config/config_error.h"

namespace pagesim::sim {
namespace {

// Counts the nodes of one document and remembers where its first one starts.
class DocumentProbe final : public YAML::EventHandler {
 public:
  int nodes = 0;
  bool only_null = true;  // no node but null ones: an empty document ("---" at the end)
  int first_line = 0;     // 1-based line of its first node

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { node(mark, true); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { node(mark, false); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string&) override {
    node(mark, false);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    node(mark, false);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    node(mark, false);
  }
  void OnMapEnd() override {}

 private:
  void node(const YAML::Mark& mark, bool null) {
    if (nodes++ == 0) first_line = mark.line + 1;
    only_null = only_null && null;
  }
};

}  // namespace

YAML::Node load_yaml_document(const std::string& text, const std::string& file) {
  YAML::Node first;
  try {
    first = YAML::Load(text);
    // A second document, read event by event and at most that far: YAML::LoadAll never
    // returns on some malformed texts (yaml-cpp 0.7 yields empty documents forever for ",").
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentProbe skip, second;
    if (parser.HandleNextDocument(skip) && parser.HandleNextDocument(second) && !second.only_null)
      throw ConfigError(file, second.first_line, "",
                        "found a second YAML document (after '---'), expected one experiment per file: put the "
                        "others in files of their own, or make them sweep cases");
  } catch (const YAML::ParserException& e) {
    throw ConfigError(file, e.mark.line + 1, "", "YAML syntax error: " + describe_yaml_error(e));
  }
  return first;
}

}  // namespace pagesim::sim

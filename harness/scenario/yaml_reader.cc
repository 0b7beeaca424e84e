// The YAML reader of scenario files: documents, mappings and scalars with their marks.
#include "scenario/yaml_reader.h"

#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <optional>
#include <sstream>

#include "scenario/values.h"

namespace peerconf::harness::scenario {

using model::Mark;
using model::ScenarioError;

namespace {

// Records where documents start and ignores everything else.
class DocumentStarts : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

  std::vector<YAML::Mark> starts;
};

}  // namespace

// "a, b, c" or, with `last`, "a, b or c".
std::string joined(std::span<const std::string_view> names, std::string_view last) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? last : ", ";
    out += names[i];
  }
  return out;
}

Mark toMark(const YAML::Mark& mark) {
  if (mark.is_null()) return {};
  return {mark.line + 1, mark.column + 1};
}

// Every echo of the file's text goes through echo (cut to a readable length).
std::string inQuotes(std::string_view text) { return "'" + echo(text) + "'"; }

// How a value reads in an error message: 'abc', the string "4", a list, a mapping, nothing.
std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return "nothing";
    case YAML::NodeType::Sequence:
      return node.size() == 0 ? "an empty list" : "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Scalar:
      break;
  }
  if (node.Tag() == "!") return "the string \"" + echo(node.Scalar()) + "\"";
  return inQuotes(node.Scalar());
}

// A plain (unquoted, untagged) scalar: the only kind that may be read as a number.
bool isPlainScalar(const YAML::Node& node) {
  return node.IsScalar() && (node.Tag() == "?" || node.Tag() == "tag:yaml.org,2002:int" ||
                             node.Tag() == "tag:yaml.org,2002:float");
}

YAML::Node YamlReader::load(const std::string& text) const {
  if (text.size() > kMaxFileBytes) fail(Mark{1, 1}, tooLarge());
  YAML::Node root;
  try {
    const std::vector<YAML::Mark> starts = documentStarts(text);
    if (starts.empty()) failEmpty();
    for (std::size_t i = 1; i < starts.size(); ++i) {
      // yaml-cpp 0.7 does not consume a stray ',' outside a flow collection: it starts the
      // same document again at the same place for ever (YAML::LoadAll never returns).
      if (starts[i].pos == starts[i - 1].pos) {
        const auto pos = static_cast<std::size_t>(starts[i].pos);
        const std::string token = pos < text.size() ? std::string(1, text[pos]) : "end of file";
        fail(toMark(starts[i]), "YAML syntax error: unexpected '" + token + "'");
      }
    }
    if (starts.size() > 1) {
      fail(toMark(starts[1]), "a scenario file holds one YAML document; a second one starts here");
    }
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    fail(toMark(e.mark), "YAML syntax error: " + e.msg);
  }
  if (root.IsNull()) failEmpty();
  return root;
}

void YamlReader::fail(Mark mark, const std::string& message) const {
  throw ScenarioError(file_, mark, message);
}

void YamlReader::failEmpty() const {
  fail(Mark{1, 1},
       "empty scenario: expected a mapping with at least 'ranks' and 'expect' "
       "(see scenarios/README.md)");
}

// Where the first documents of `text` start: at most three, enough to tell one document from
// several, and a parser stuck on a stray token (the same start twice) from either.
std::vector<YAML::Mark> YamlReader::documentStarts(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentStarts handler;
  for (int i = 0; i < 3 && parser.HandleNextDocument(handler); ++i) {
  }
  return handler.starts;
}

// The entries of a mapping, in file order; rejects non-mappings, odd keys and duplicates.
std::vector<Entry> YamlReader::entries(const YAML::Node& node, const std::string& what,
                                       Mark where) const {
  if (!node.IsMap()) fail(where, what + " must be a mapping, got " + describe(node));
  std::vector<Entry> out;
  for (auto it = node.begin(); it != node.end(); ++it) {
    Entry entry{{}, it->first, it->second};
    if (!entry.keyNode.IsScalar()) {
      fail(entry.keyMark(), "keys of " + what + " must be names, got " + describe(it->first));
    }
    entry.key = entry.keyNode.Scalar();
    for (const Entry& seen : out) {
      if (seen.key == entry.key) {
        fail(entry.keyMark(), "duplicate key " + inQuotes(entry.key) + " in " + what +
                                  " (first at line " + std::to_string(seen.keyMark().line) + ")");
      }
    }
    out.push_back(std::move(entry));
  }
  return out;
}

void YamlReader::checkKnown(const std::vector<Entry>& list, std::span<const std::string_view> known,
                            const std::string& what) const {
  for (const Entry& entry : list) {
    if (std::find(known.begin(), known.end(), entry.key) == known.end()) {
      fail(entry.keyMark(), "unknown key " + inQuotes(entry.key) + " in " + what + "; " +
                                suggestion(entry.key, known));
    }
  }
}

const Entry* YamlReader::find(const std::vector<Entry>& list, std::string_view key) {
  for (const Entry& entry : list) {
    if (entry.key == key) return &entry;
  }
  return nullptr;
}

std::int64_t YamlReader::integer(const Entry& entry) const {
  std::optional<std::int64_t> value;
  if (isPlainScalar(entry.value)) value = parseInteger(entry.value.Scalar());
  if (!value) {
    fail(entry.valueMark(),
         inQuotes(entry.key) + " must be an integer, got " + describe(entry.value));
  }
  return *value;
}

std::int64_t YamlReader::integerIn(const YAML::Node& node, const std::string& what) const {
  std::optional<std::int64_t> value;
  if (isPlainScalar(node)) value = parseInteger(node.Scalar());
  if (!value) fail(toMark(node.Mark()), what + " must be an integer, got " + describe(node));
  return *value;
}

std::string YamlReader::string(const Entry& entry) const {
  if (!entry.value.IsScalar()) {
    fail(entry.valueMark(),
         inQuotes(entry.key) + " must be a string, got " + describe(entry.value));
  }
  return entry.value.Scalar();
}

// A string that must be one of `names`; returns its index.
std::size_t YamlReader::choice(const Entry& entry, std::span<const std::string_view> names,
                               const std::string& what) const {
  const std::string text = string(entry);
  auto it = std::find(names.begin(), names.end(), text);
  if (it == names.end()) {
    fail(entry.valueMark(),
         "unknown " + what + " " + inQuotes(text) + "; " + suggestion(text, names));
  }
  return static_cast<std::size_t>(it - names.begin());
}

std::chrono::milliseconds YamlReader::duration(const Entry& entry) const {
  std::optional<std::chrono::milliseconds> value;
  if (entry.value.IsScalar()) value = parseDuration(entry.value.Scalar());
  if (!value) {
    fail(entry.valueMark(), inQuotes(entry.key) +
                                " must be a positive duration: milliseconds (500) or a string "
                                "like \"500ms\" or \"2s\", got " +
                                describe(entry.value));
  }
  return *value;
}
// A plain `true` or `false` (YAML 1.2's booleans; yes/no/on/off are not read as booleans).
bool YamlReader::boolean(const Entry& entry) const {
  if (isPlainScalar(entry.value) || entry.value.Tag() == "tag:yaml.org,2002:bool") {
    if (entry.value.Scalar() == "true") return true;
    if (entry.value.Scalar() == "false") return false;
  }
  fail(entry.valueMark(),
       inQuotes(entry.key) + " must be true or false, got " + describe(entry.value));
}

}  // namespace peerconf::harness::scenario

// Reading a scenario file's YAML so that every problem is reported at the line and column of the
// node at fault (ScenarioError, "FILE:LINE:COL: message"): one document only, mappings without
// duplicate or unknown keys ("did you mean"), and the scalar formats of scenario/values.h. The
// scenario parser (parser.cc) walks a scenario's keys with it.
#pragma once

#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/scenario.h"

namespace peerconf::harness::scenario {

// yaml-cpp's 0-based mark as the 1-based one errors name (0:0 when yaml-cpp has none).
model::Mark toMark(const YAML::Mark& mark);
// Every echo of the file's text goes through values::echo (cut to a readable length).
std::string inQuotes(std::string_view text);
// How a value reads in an error message: 'abc', the string "4", a list, a mapping, nothing.
std::string describe(const YAML::Node& node);
// A plain (unquoted, untagged) scalar: the only kind that may be read as a number.
bool isPlainScalar(const YAML::Node& node);
// "a, b, c" or, with `last`, "a, b or c".
std::string joined(std::span<const std::string_view> names, std::string_view last = ", ");

// One `key: value` of a mapping, with the marks of both.
struct Entry {
  std::string key;
  YAML::Node keyNode;
  YAML::Node value;
  // Errors about the value point at it, except when it is empty: yaml-cpp then marks the next
  // token, which may be on another line, so the key is the better place.
  model::Mark valueMark() const { return toMark(value.IsNull() ? keyNode.Mark() : value.Mark()); }
  model::Mark keyMark() const { return toMark(keyNode.Mark()); }
};

// The reader of one file: `file` labels every error.
class YamlReader {
 public:
  explicit YamlReader(std::string file) : file_(std::move(file)) {}

  const std::string& file() const noexcept { return file_; }
  // The one document of `text`: a file larger than values::kMaxFileBytes, a YAML syntax error,
  // a second document, or an empty one is a ScenarioError at its place.
  YAML::Node load(const std::string& text) const;

  [[noreturn]] void fail(model::Mark mark, const std::string& message) const;
  [[noreturn]] void failEmpty() const;
  // The entries of a mapping, in file order; rejects non-mappings, odd keys and duplicates.
  std::vector<Entry> entries(const YAML::Node& node, const std::string& what,
                             model::Mark where) const;
  // Rejects a key not in `known`, suggesting the closest.
  void checkKnown(const std::vector<Entry>& list, std::span<const std::string_view> known,
                  const std::string& what) const;
  static const Entry* find(const std::vector<Entry>& list, std::string_view key);
  std::int64_t integer(const Entry& entry) const;
  std::int64_t integerIn(const YAML::Node& node, const std::string& what) const;
  std::string string(const Entry& entry) const;
  // A string that must be one of `names`; returns its index.
  std::size_t choice(const Entry& entry, std::span<const std::string_view> names,
                     const std::string& what) const;
  // Milliseconds (500) or a string like "500ms" or "2s".
  std::chrono::milliseconds duration(const Entry& entry) const;
  // A plain `true` or `false` (YAML 1.2's booleans; yes/no/on/off are not read as booleans).
  bool boolean(const Entry& entry) const;

 private:
  static std::vector<YAML::Mark> documentStarts(const std::string& text);

  std::string file_;
};

}  // namespace peerconf::harness::scenario

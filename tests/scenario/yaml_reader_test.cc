// The YAML reader of scenario files (scenario/yaml_reader.h), driven directly: one document,
// mappings without duplicate or unknown keys, typed scalars, and every error at the line and
// column of the node at fault.
#include "scenario/yaml_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <string>

#include "scenario/values.h"

namespace peerconf::harness::yaml_reader {

using model::Mark;
using model::ScenarioError;
using scenario::describe;
using scenario::Entry;
using scenario::inQuotes;
using scenario::isPlainScalar;
using scenario::joined;
using scenario::toMark;
using scenario::YamlReader;
namespace {

using ::testing::HasSubstr;

const YamlReader kReader("r.yaml");

// The error `f` throws, as "LINE:COL: message".
template <typename F>
std::string errorOf(F&& f) {
  try {
    f();
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.file(), "r.yaml");
    return std::to_string(e.mark().line) + ":" + std::to_string(e.mark().column) + ": " +
           e.message();
  }
  return "no error";
}

std::vector<Entry> entriesOf(const std::string& text) {
  return kReader.entries(kReader.load(text), "'test'", Mark{1, 1});
}

TEST(YamlReader, LoadsOneDocument) {
  const YAML::Node root = kReader.load("a: 1\nb: [x]\n");
  EXPECT_TRUE(root.IsMap());
  EXPECT_THAT(errorOf([] { kReader.load("a: 1\n---\nb: 2\n"); }),
              HasSubstr("2:1: a scenario file holds one YAML document"));
  EXPECT_THAT(errorOf([] { kReader.load("# only a comment\n"); }),
              HasSubstr("1:1: empty scenario"));
  EXPECT_THAT(errorOf([] { kReader.load("a: [1, 2\n"); }), HasSubstr("YAML syntax error"));
  // yaml-cpp would start the same document for ever on a stray ','.
  EXPECT_EQ(errorOf([] { kReader.load(","); }), "1:1: YAML syntax error: unexpected ','");
  // Past the cap nothing is parsed.
  EXPECT_EQ(errorOf([] { kReader.load(std::string(scenario::kMaxFileBytes + 1, '#')); }),
            "1:1: " + scenario::tooLarge());
}

TEST(YamlReader, EntriesInFileOrderWithMarks) {
  const std::vector<Entry> list = entriesOf("b: 1\na:\n  - x\n");
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].key, "b");
  EXPECT_EQ(list[1].key, "a");
  EXPECT_EQ(list[1].keyMark().line, 2);
  EXPECT_EQ(list[1].keyMark().column, 1);
  EXPECT_EQ(list[1].valueMark().line, 3);
  EXPECT_EQ(YamlReader::find(list, "a"), &list[1]);
  EXPECT_EQ(YamlReader::find(list, "c"), nullptr);
  // An empty value is marked at its key (yaml-cpp would mark the next token).
  const std::vector<Entry> empty = entriesOf("k:\nnext: 1\n");
  EXPECT_EQ(empty[0].valueMark().line, 1);
}

TEST(YamlReader, EntriesRejectNonMappingsOddKeysAndDuplicates) {
  EXPECT_EQ(errorOf([] {
              kReader.entries(kReader.load("[1]\n"), "'test'", Mark{4, 2});
            }),
            "4:2: 'test' must be a mapping, got a list");
  EXPECT_EQ(errorOf([] { entriesOf("a: 1\n[x]: 2\n"); }),
            "2:1: keys of 'test' must be names, got a list");
  EXPECT_EQ(errorOf([] { entriesOf("a: 1\nb: 2\na: 3\n"); }),
            "3:1: duplicate key 'a' in 'test' (first at line 1)");
}

TEST(YamlReader, UnknownKeysGetASuggestion) {
  const std::array<std::string_view, 2> known{"ranks", "seed"};
  EXPECT_NO_THROW(kReader.checkKnown(entriesOf("seed: 1\n"), known, "'test'"));
  EXPECT_EQ(errorOf([&] { kReader.checkKnown(entriesOf("seed: 1\nrnaks: 2\n"), known, "'test'"); }),
            "2:1: unknown key 'rnaks' in 'test'; did you mean 'ranks'?");
}

TEST(YamlReader, Integers) {
  const std::vector<Entry> list = entriesOf("a: -12\nb: \"12\"\nc: 1.5\nd:\n");
  EXPECT_EQ(kReader.integer(list[0]), -12);
  EXPECT_EQ(errorOf([&] { kReader.integer(list[1]); }),
            "2:4: 'b' must be an integer, got the string \"12\"");
  EXPECT_EQ(errorOf([&] { kReader.integer(list[2]); }), "3:4: 'c' must be an integer, got '1.5'");
  EXPECT_EQ(errorOf([&] { kReader.integer(list[3]); }), "4:1: 'd' must be an integer, got nothing");
  EXPECT_EQ(kReader.integerIn(list[0].value, "a rank"), -12);
  EXPECT_EQ(errorOf([&] { kReader.integerIn(list[2].value, "a rank"); }),
            "3:4: a rank must be an integer, got '1.5'");
}

TEST(YamlReader, StringsAndChoices) {
  const std::array<std::string_view, 3> names{"reference", "single-buffer", "epoch-ge"};
  const std::vector<Entry> list = entriesOf("a: epoch-ge\nb: referense\nc: {x: 1}\n");
  EXPECT_EQ(kReader.string(list[0]), "epoch-ge");
  EXPECT_EQ(kReader.choice(list[0], names, "layout"), 2u);
  EXPECT_EQ(errorOf([&] { kReader.choice(list[1], names, "layout"); }),
            "2:4: unknown layout 'referense'; did you mean 'reference'?");
  EXPECT_EQ(errorOf([&] { kReader.string(list[2]); }), "3:4: 'c' must be a string, got a mapping");
}

TEST(YamlReader, DurationsAndBooleans) {
  const std::vector<Entry> list =
      entriesOf("a: 250\nb: 2s\nc: 1.5ms\nd: true\ne: false\nf: yes\ng: \"true\"\n");
  EXPECT_EQ(kReader.duration(list[0]), std::chrono::milliseconds(250));
  EXPECT_EQ(kReader.duration(list[1]), std::chrono::milliseconds(2000));
  EXPECT_THAT(errorOf([&] { kReader.duration(list[2]); }),
              HasSubstr("3:4: 'c' must be a positive duration"));
  EXPECT_TRUE(kReader.boolean(list[3]));
  EXPECT_FALSE(kReader.boolean(list[4]));
  EXPECT_EQ(errorOf([&] { kReader.boolean(list[5]); }),
            "6:4: 'f' must be true or false, got 'yes'");
  EXPECT_EQ(errorOf([&] { kReader.boolean(list[6]); }),
            "7:4: 'g' must be true or false, got the string \"true\"");
}

TEST(YamlReader, DescriptionsAndHelpers) {
  EXPECT_EQ(describe(YAML::Load("[]")), "an empty list");
  EXPECT_EQ(describe(YAML::Load("~")), "nothing");
  EXPECT_EQ(describe(YAML::Load("abc")), "'abc'");
  EXPECT_EQ(describe(YAML::Load("'abc'")), "the string \"abc\"");
  EXPECT_TRUE(isPlainScalar(YAML::Load("12")));
  EXPECT_FALSE(isPlainScalar(YAML::Load("'12'")));
  EXPECT_FALSE(isPlainScalar(YAML::Load("[12]")));
  EXPECT_EQ(inQuotes(std::string(100, 'k')), "'" + std::string(80, 'k') + "... (100 bytes)'");
  const std::array<std::string_view, 3> names{"a", "b", "c"};
  EXPECT_EQ(joined(names), "a, b, c");
  EXPECT_EQ(joined(names, " or "), "a, b or c");
  EXPECT_EQ(joined(std::span<const std::string_view>(names).first(1), " or "), "a");
  EXPECT_EQ(toMark(YAML::Mark::null_mark()).line, 0);
}

}  // namespace
}  // namespace peerconf::harness::yaml_reader

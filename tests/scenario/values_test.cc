// The value formats of scenario files (scenario/values.h), driven directly: sizes, durations,
// numbers, hipError_t names, suggestions for typos, and bounded echoes of the file's text.
#include "scenario/values.h"

#include <gtest/gtest.h>

#include <array>
#include <string>

#include "model/scenario.h"

namespace peerconf::harness {

using model::hipErrorName;
namespace {

using std::chrono::milliseconds;

TEST(ScenarioValues, ByteSizes) {
  EXPECT_EQ(scenario::parseByteSize("1"), 1u);
  EXPECT_EQ(scenario::parseByteSize("65536"), 65536u);
  EXPECT_EQ(scenario::parseByteSize("3B"), 3u);
  EXPECT_EQ(scenario::parseByteSize("64KiB"), 65536u);
  EXPECT_EQ(scenario::parseByteSize("64 KiB"), 65536u);
  EXPECT_EQ(scenario::parseByteSize("2MiB"), 2u << 20);
  EXPECT_EQ(scenario::parseByteSize("1GiB"), std::size_t{1} << 30);
  for (const char* bad : {"", "0", "0KiB", "KiB", "64KB", "64kib", "64  KiB", "1.5MiB", "-1", "64 ",
                          " 64", "1TiB", "99999999999999GiB", "0x10"}) {
    EXPECT_FALSE(scenario::parseByteSize(bad).has_value()) << bad;
  }
}

TEST(ScenarioValues, Durations) {
  EXPECT_EQ(scenario::parseDuration("500"), milliseconds(500));
  EXPECT_EQ(scenario::parseDuration("500ms"), milliseconds(500));
  EXPECT_EQ(scenario::parseDuration("500 ms"), milliseconds(500));
  EXPECT_EQ(scenario::parseDuration("2s"), milliseconds(2000));
  EXPECT_EQ(scenario::parseDuration("1.5s"), milliseconds(1500));
  EXPECT_EQ(scenario::parseDuration("0.25s"), milliseconds(250));
  EXPECT_EQ(scenario::parseDuration("0.001s"), milliseconds(1));
  for (const char* bad : {"", "0", "0ms", "0s", "0.0s", "1.5ms", "0.0005s", "1.s", ".5s", "2m",
                          "2h", "-1s", "1e3", "2 s ", "ms", "99999999999999999999s"}) {
    EXPECT_FALSE(scenario::parseDuration(bad).has_value()) << bad;
  }
}

TEST(ScenarioValues, Formatting) {
  EXPECT_EQ(scenario::formatByteSize(65536), "64KiB");
  EXPECT_EQ(scenario::formatByteSize(1000), "1000B");
  EXPECT_EQ(scenario::formatByteSize(std::size_t{3} << 30), "3GiB");
  EXPECT_EQ(scenario::formatDuration(milliseconds(2000)), "2s");
  EXPECT_EQ(scenario::formatDuration(milliseconds(250)), "250ms");
}

TEST(ScenarioValues, HipErrors) {
  EXPECT_EQ(scenario::hipErrorCode("hipErrorInvalidValue"), 1);
  EXPECT_EQ(scenario::hipErrorCode("hipErrorOutOfMemory"), 2);
  EXPECT_EQ(scenario::hipErrorCode("hipErrorNotInitialized"), 3);
  EXPECT_EQ(scenario::hipErrorCode("hipErrorNoDevice"), 100);
  EXPECT_EQ(scenario::hipErrorCode("hipErrorInvalidDevice"), 101);
  EXPECT_EQ(scenario::hipErrorCode("hipErrorInvalidContext"), 201);
  EXPECT_EQ(scenario::hipErrorCode("hipErrorMapFailed"), 205);
  EXPECT_EQ(scenario::hipErrorCode("hipErrorInvalidHandle"), 400);
  EXPECT_EQ(scenario::hipErrorCode("hipErrorNotSupported"), 801);
  EXPECT_EQ(scenario::hipErrorCode("hipErrorUnknown"), 999);
  EXPECT_FALSE(scenario::hipErrorCode("hipSuccess").has_value());
  EXPECT_FALSE(scenario::hipErrorCode("hiperrormapfailed").has_value());
  for (std::string_view name : scenario::hipErrorNames()) {
    EXPECT_EQ(hipErrorName(*scenario::hipErrorCode(name)), name);
  }
  EXPECT_EQ(hipErrorName(0), "hipSuccess");
  EXPECT_EQ(hipErrorName(42), "hipError(42)");
}

TEST(ScenarioValues, Suggestions) {
  const std::array<std::string_view, 3> keys{"ranks", "rank", "seed"};
  EXPECT_EQ(scenario::closest("rnaks", keys), "ranks");
  EXPECT_EQ(scenario::closest("RANKS", keys), "ranks");
  EXPECT_FALSE(scenario::closest("colour", keys).has_value());
  EXPECT_EQ(scenario::suggestion("sede", keys), "did you mean 'seed'?");
  EXPECT_EQ(scenario::suggestion("zzzzzz", keys), "expected one of: ranks, rank, seed");
}

// Suggestions are bounded: no candidate is compared to a word far longer or shorter than it, a
// word past 64 bytes gets none, and echoed text is cut (the validator's memory and time bound).
TEST(ScenarioValues, SuggestionsAndEchoesAreBounded) {
  const std::array<std::string_view, 3> keys{"ranks", "rank", "seed"};
  EXPECT_EQ(scenario::closest("ranksxx", keys), "ranks");  // 2 edits, a third of 7 is 2
  EXPECT_FALSE(scenario::closest("ranksxxx", keys).has_value());
  EXPECT_FALSE(scenario::closest(std::string(65, 'r'), keys).has_value());
  EXPECT_FALSE(scenario::closest("ranks" + std::string(10'000'000, 's'), keys).has_value());
  EXPECT_EQ(scenario::echo("short"), "short");
  EXPECT_EQ(scenario::echo(std::string(80, 'a')), std::string(80, 'a'));
  EXPECT_EQ(scenario::echo(std::string(81, 'a')), std::string(80, 'a') + "... (81 bytes)");
  // Never cut inside a UTF-8 sequence: "é" is 2 bytes, the 80th and 81st here.
  EXPECT_EQ(scenario::echo(std::string(79, 'a') + "\xc3\xa9" + "b"),
            std::string(79, 'a') + "... (82 bytes)");
}

TEST(ScenarioValues, Numbers) {
  EXPECT_EQ(scenario::parseInteger("42"), 42);
  EXPECT_EQ(scenario::parseInteger("-7"), -7);
  EXPECT_EQ(scenario::parseInteger("9223372036854775807"), INT64_MAX);
  for (const char* bad : {"", "-", "+1", " 1", "1 ", "0x10", "1.0", "-+1", "9223372036854775808"}) {
    EXPECT_FALSE(scenario::parseInteger(bad).has_value()) << bad;
  }
  EXPECT_EQ(scenario::parseUnsigned("18446744073709551615"), UINT64_MAX);
  for (const char* bad : {"", "-1", "+1", "18446744073709551616", "1e3", "7 "}) {
    EXPECT_FALSE(scenario::parseUnsigned(bad).has_value()) << bad;
  }
  EXPECT_EQ(scenario::parseNumber("0.5"), 0.5);
  EXPECT_EQ(scenario::parseNumber("1"), 1.0);
  EXPECT_EQ(scenario::parseNumber("1e-3"), 1e-3);
  EXPECT_EQ(scenario::parseNumber(".25"), 0.25);
  EXPECT_EQ(scenario::parseNumber("-2"), -2.0);
  for (const char* bad : {"", "inf", "nan", "+1", "1e999", "0.5x", " 1", "one"}) {
    EXPECT_FALSE(scenario::parseNumber(bad).has_value()) << bad;
  }
}

TEST(ScenarioValues, TooLargeNamesTheCap) {
  EXPECT_EQ(scenario::kMaxFileBytes, std::size_t{256} << 10);
  EXPECT_EQ(
      scenario::tooLarge().rfind("more than 256KiB: a scenario file may be at most 256KiB", 0), 0u)
      << scenario::tooLarge();
}

}  // namespace
}  // namespace peerconf::harness

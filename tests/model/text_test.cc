// Text hygiene (model/text.h): strict UTF-8 decoding, replacement of invalid sequences, markup
// escaping, and durations for people.
#include "model/text.h"

#include <gtest/gtest.h>

namespace peerconf::harness::model {

namespace {

TEST(Text, DecodesEachLengthAndRejectsWhatXmlWouldNot) {
  std::uint32_t c = 0;
  EXPECT_EQ(decodeUtf8("A", 0, c), 1u);
  EXPECT_EQ(c, 0x41u);
  EXPECT_EQ(decodeUtf8("\xc3\xa9", 0, c), 2u);
  EXPECT_EQ(c, 0xE9u);
  EXPECT_EQ(decodeUtf8("\xe2\x82\xac", 0, c), 3u);
  EXPECT_EQ(c, 0x20ACu);
  EXPECT_EQ(decodeUtf8("x\xf0\x9f\x98\x80", 1, c), 4u);
  EXPECT_EQ(c, 0x1F600u);
  EXPECT_EQ(decodeUtf8("\x80", 0, c), 0u);              // a stray continuation byte
  EXPECT_EQ(decodeUtf8("\xc3", 0, c), 0u);              // truncated
  EXPECT_EQ(decodeUtf8("\xc3(", 0, c), 0u);             // not a continuation
  EXPECT_EQ(decodeUtf8("\xc0\xaf", 0, c), 0u);          // overlong '/'
  EXPECT_EQ(decodeUtf8("\xed\xa0\x80", 0, c), 0u);      // a surrogate
  EXPECT_EQ(decodeUtf8("\xf4\x90\x80\x80", 0, c), 0u);  // past U+10FFFF
  EXPECT_EQ(decodeUtf8("\xff", 0, c), 0u);
}

TEST(Text, AppendUtf8IsTheInverseOfDecode) {
  for (std::uint32_t cp : {0x24u, 0x7FFu, 0x800u, 0xFFFDu, 0x10000u, 0x10FFFFu}) {
    std::string out;
    appendUtf8(out, cp);
    std::uint32_t back = 0;
    EXPECT_EQ(decodeUtf8(out, 0, back), out.size()) << cp;
    EXPECT_EQ(back, cp);
  }
}

TEST(Text, ValidUtf8ReplacesOnlyTheBadBytes) {
  EXPECT_EQ(validUtf8("plain \xc3\xa9t\xc3\xa9"), "plain \xc3\xa9t\xc3\xa9");
  EXPECT_EQ(validUtf8("a\xff"
                      "b"),
            "a\xef\xbf\xbd"
            "b");
  EXPECT_EQ(validUtf8("\xe2\x82"), "\xef\xbf\xbd\xef\xbf\xbd");  // each byte of a truncated one
  EXPECT_EQ(validUtf8(""), "");
}

TEST(Text, EscapeMarkup) {
  EXPECT_STREQ(markupEntity('&'), "&amp;");
  EXPECT_STREQ(markupEntity('<'), "&lt;");
  EXPECT_STREQ(markupEntity('>'), "&gt;");
  EXPECT_EQ(markupEntity('"'), nullptr);
  const auto noControls = [](std::uint32_t c) { return c >= 0x20 || c == '\n'; };
  EXPECT_EQ(escapeMarkup("a<b>&\x01\n\xff", markupEntity, noControls),
            "a&lt;b&gt;&amp;\xef\xbf\xbd\n\xef\xbf\xbd");
}

TEST(Text, FormatNs) {
  EXPECT_EQ(formatNs(0), "0.0 ms");
  EXPECT_EQ(formatNs(3'400'000), "3.4 ms");
  EXPECT_EQ(formatNs(12'000'000), "12 ms");
  EXPECT_EQ(formatNs(9'999'000'000), "9999 ms");
  EXPECT_EQ(formatNs(12'500'000'000), "12.50 s");
}

TEST(Text, HexPtr) {
  EXPECT_EQ(hexPtr(0), "0x0");
  EXPECT_EQ(hexPtr(0x7f00), "0x7f00");
  EXPECT_EQ(hexPtr(~0ull), "0xffffffffffffffff");
}

}  // namespace
}  // namespace peerconf::harness::model

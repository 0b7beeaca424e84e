// Text hygiene shared by the writers: messages come from runtimes and fault injection, so they
// may hold invalid UTF-8 or control bytes that a JSON or XML consumer would reject.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace peerconf::harness::model {

// `text` with every invalid UTF-8 sequence (stray or truncated bytes, overlong forms,
// surrogates, code points past U+10FFFF) replaced by U+FFFD. Valid UTF-8 comes back unchanged.
std::string validUtf8(std::string_view text);

// Calls `visit(codePoint)` for each code point of validUtf8(text).
template <typename Visit>
void forEachCodePoint(std::string_view text, Visit&& visit);

// Appends `codePoint` to `out` as UTF-8.
void appendUtf8(std::string& out, std::uint32_t codePoint);

// Decodes one UTF-8 sequence at `text[i]`; returns its length (1–4) and sets `codePoint`, or
// returns 0 when the bytes there are not valid UTF-8.
std::size_t decodeUtf8(std::string_view text, std::size_t i, std::uint32_t& codePoint);

// "&amp;", "&lt;", "&gt;" for '&', '<', '>'; nullptr for any other code point.
const char* markupEntity(std::uint32_t codePoint);

// `text` for HTML or XML: each code point as `escape(c)` says (a replacement, or nullptr to keep
// it), kept only when `allowed(c)` (else U+FFFD), invalid UTF-8 as U+FFFD.
template <typename Escape, typename Allowed>
std::string escapeMarkup(std::string_view text, Escape&& escape, Allowed&& allowed);

template <typename Visit>
void forEachCodePoint(std::string_view text, Visit&& visit) {
  for (std::size_t i = 0; i < text.size();) {
    std::uint32_t codePoint = 0;
    const std::size_t length = decodeUtf8(text, i, codePoint);
    if (length == 0) {
      visit(std::uint32_t{0xFFFD});
      ++i;
    } else {
      visit(codePoint);
      i += length;
    }
  }
}

template <typename Escape, typename Allowed>
std::string escapeMarkup(std::string_view text, Escape&& escape, Allowed&& allowed) {
  std::string out;
  out.reserve(text.size() + 16);
  forEachCodePoint(text, [&](std::uint32_t c) {
    if (const char* replaced = escape(c)) {
      out += replaced;
    } else {
      appendUtf8(out, allowed(c) ? c : 0xFFFD);
    }
  });
  return out;
}

}  // namespace peerconf::harness::model

namespace peerconf::harness::model {

// A duration for people: "12 ms", "3.4 ms", "1.25 s" (checkers' findings, reports).
std::string formatNs(std::int64_t ns);

// A device address for people: "0x7f00" (findings, the recorded calls' details, leftovers).
std::string hexPtr(std::uint64_t ptr);

}  // namespace peerconf::harness::model

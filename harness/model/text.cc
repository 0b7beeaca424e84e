// UTF-8 decoding strict enough for XML and JSON consumers.
#include "model/text.h"

#include <cstdio>

namespace peerconf::harness::model {

std::size_t decodeUtf8(std::string_view text, std::size_t i, std::uint32_t& codePoint) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) {
    codePoint = lead;
    return 1;
  }
  std::size_t length = 0;
  std::uint32_t value = 0;
  std::uint32_t minimum = 0;
  if ((lead & 0xE0) == 0xC0) {
    length = 2, value = lead & 0x1F, minimum = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, value = lead & 0x0F, minimum = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, value = lead & 0x07, minimum = 0x10000;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    value = (value << 6) | (byte(i + k) & 0x3F);
  }
  if (value < minimum || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) return 0;
  codePoint = value;
  return length;
}

void appendUtf8(std::string& out, std::uint32_t codePoint) {
  if (codePoint < 0x80) {
    out += static_cast<char>(codePoint);
  } else if (codePoint < 0x800) {
    out += static_cast<char>(0xC0 | (codePoint >> 6));
    out += static_cast<char>(0x80 | (codePoint & 0x3F));
  } else if (codePoint < 0x10000) {
    out += static_cast<char>(0xE0 | (codePoint >> 12));
    out += static_cast<char>(0x80 | ((codePoint >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (codePoint & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (codePoint >> 18));
    out += static_cast<char>(0x80 | ((codePoint >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((codePoint >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (codePoint & 0x3F));
  }
}

const char* markupEntity(std::uint32_t codePoint) {
  switch (codePoint) {
    case '&':
      return "&amp;";
    case '<':
      return "&lt;";
    case '>':
      return "&gt;";
    default:
      return nullptr;
  }
}

std::string validUtf8(std::string_view text) {
  // Fast path: most messages are ASCII or already valid.
  bool valid = true;
  for (std::size_t i = 0; i < text.size() && valid;) {
    std::uint32_t codePoint = 0;
    const std::size_t length = decodeUtf8(text, i, codePoint);
    valid = length != 0;
    i += length;
  }
  if (valid) return std::string(text);
  std::string out;
  out.reserve(text.size() + 8);
  forEachCodePoint(text, [&](std::uint32_t codePoint) { appendUtf8(out, codePoint); });
  return out;
}

}  // namespace peerconf::harness::model

namespace peerconf::harness::model {

std::string hexPtr(std::uint64_t ptr) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(ptr));
  return text;
}

std::string formatNs(std::int64_t ns) {
  char text[64];
  const double ms = static_cast<double>(ns) / 1e6;
  if (ms >= 10000.0) {
    std::snprintf(text, sizeof text, "%.2f s", ms / 1000.0);
  } else if (ms >= 10.0) {
    std::snprintf(text, sizeof text, "%.0f ms", ms);
  } else {
    std::snprintf(text, sizeof text, "%.1f ms", ms);
  }
  return text;
}

}  // namespace peerconf::harness::model

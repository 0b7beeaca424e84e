// Scenario values: sizes, durations, numbers, hipError_t names and "did you mean" suggestions.
#include "scenario/values.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "faults/fault_spec.h"

namespace peerconf::harness::scenario {

namespace {

bool isDigit(char c) { return c >= '0' && c <= '9'; }

// Splits "64 KiB" into ("64", "KiB"): the number is the leading [0-9.] run, then at most one
// space, then the unit (possibly empty).
std::pair<std::string_view, std::string_view> splitUnit(std::string_view text) {
  std::size_t end = 0;
  while (end < text.size() && (isDigit(text[end]) || text[end] == '.')) ++end;
  std::string_view number = text.substr(0, end);
  std::string_view unit = text.substr(end);
  if (unit.size() > 1 && unit.front() == ' ') unit.remove_prefix(1);
  return {number, unit};
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// Optimal string alignment distance: Levenshtein plus adjacent transpositions ("opne" -> 1).
// Three rolling rows of b's length (the transposition looks two rows back): O(|b|) memory.
std::size_t editDistance(std::string_view a, std::string_view b) {
  const std::size_t m = b.size();
  std::vector<std::size_t> before(m + 1);  // row i - 2
  std::vector<std::size_t> previous(m + 1);
  std::vector<std::size_t> current(m + 1);
  for (std::size_t j = 0; j <= m; ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        current[j] = std::min(current[j], before[j - 2] + 1);
      }
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[m];
}

// Longer words get no suggestion: no name a scenario knows is near this long, and the distance
// costs |word| x |candidate|.
constexpr std::size_t kMaxSuggestedWord = 64;
// What an error message echoes of the file's text, at most (then "... (N bytes)").
constexpr std::size_t kMaxEchoed = 80;

}  // namespace

std::optional<std::int64_t> parseInteger(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::int64_t value = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (*first == '-' && text.size() > 1 && !isDigit(text[1])) return std::nullopt;
  auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec != std::errc{} || ptr != last) return std::nullopt;
  return value;
}

std::optional<std::uint64_t> parseUnsigned(std::string_view text) {
  if (text.empty() || !isDigit(text.front())) return std::nullopt;
  std::uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> parseNumber(std::string_view text) {
  if (text.empty() || !(isDigit(text.front()) || text.front() == '.' || text.front() == '-')) {
    return std::nullopt;
  }
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || ptr != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

std::optional<std::size_t> parseByteSize(std::string_view text) {
  auto [number, unit] = splitUnit(text);
  const std::optional<std::uint64_t> count = parseUnsigned(number);
  if (!count || *count == 0) return std::nullopt;
  std::uint64_t scale = 0;
  if (unit.empty() || unit == "B") {
    scale = 1;
  } else if (unit == "KiB") {
    scale = std::uint64_t{1} << 10;
  } else if (unit == "MiB") {
    scale = std::uint64_t{1} << 20;
  } else if (unit == "GiB") {
    scale = std::uint64_t{1} << 30;
  } else {
    return std::nullopt;
  }
  if (*count > std::numeric_limits<std::size_t>::max() / scale) return std::nullopt;
  return static_cast<std::size_t>(*count * scale);
}

std::optional<std::chrono::milliseconds> parseDuration(std::string_view text) {
  auto [number, unit] = splitUnit(text);
  const std::size_t dot = number.find('.');
  const std::string_view whole = number.substr(0, dot);
  const std::string_view fraction =
      dot == std::string_view::npos ? std::string_view{} : number.substr(dot + 1);
  const std::optional<std::uint64_t> wholeValue = parseUnsigned(whole);
  if (!wholeValue) return std::nullopt;
  // Ten years of milliseconds is far beyond any deadline and far from overflow.
  constexpr std::uint64_t kMaxMs = 10ULL * 365 * 24 * 3600 * 1000;
  std::uint64_t ms = 0;
  if (unit.empty() || unit == "ms") {
    if (dot != std::string_view::npos) return std::nullopt;  // no fractions of a millisecond
    ms = *wholeValue;
  } else if (unit == "s") {
    if (dot != std::string_view::npos) {
      if (fraction.empty() || fraction.size() > 3) return std::nullopt;
      if (!std::all_of(fraction.begin(), fraction.end(), isDigit)) return std::nullopt;
    }
    if (*wholeValue > kMaxMs / 1000) return std::nullopt;
    std::uint64_t fractionMs = 0;
    for (std::size_t i = 0; i < 3; ++i) {
      fractionMs = fractionMs * 10 + (i < fraction.size() ? fraction[i] - '0' : 0);
    }
    ms = *wholeValue * 1000 + fractionMs;
  } else {
    return std::nullopt;
  }
  if (ms == 0 || ms > kMaxMs) return std::nullopt;
  return std::chrono::milliseconds(static_cast<std::int64_t>(ms));
}

std::optional<int> hipErrorCode(std::string_view name) {
  const auto code = faults::hipErrorCode(name);
  if (code == 0) return std::nullopt;  // hipSuccess is no failure
  return code;
}

std::span<const std::string_view> hipErrorNames() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (const auto& [code, name] : faults::hipErrorNames()) {
      if (code != 0) out.push_back(name);
    }
    return out;
  }();
  return names;
}

std::optional<std::string_view> closest(std::string_view word,
                                        std::span<const std::string_view> candidates) {
  if (word.size() > kMaxSuggestedWord) return std::nullopt;
  const std::string needle = lower(word);
  // A third of the word may be wrong (at least one character): "rnaks" -> "ranks", not "seed".
  const std::size_t allowed = std::max<std::size_t>(1, needle.size() / 3);
  std::optional<std::string_view> best;
  std::size_t bestDistance = std::numeric_limits<std::size_t>::max();
  for (std::string_view candidate : candidates) {
    // The distance is at least the difference of the lengths: skip what cannot be close.
    const std::size_t gap = candidate.size() > needle.size() ? candidate.size() - needle.size()
                                                             : needle.size() - candidate.size();
    if (gap > allowed) continue;
    const std::size_t distance = editDistance(needle, lower(candidate));
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  if (!best || bestDistance > allowed) return std::nullopt;
  return best;
}

std::string suggestion(std::string_view word, std::span<const std::string_view> candidates) {
  if (std::optional<std::string_view> near = closest(word, candidates)) {
    return "did you mean '" + std::string(*near) + "'?";
  }
  std::string out = "expected one of: ";
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (i > 0) out += ", ";
    out += candidates[i];
  }
  return out;
}

std::string tooLarge() {
  return "more than " + formatByteSize(kMaxFileBytes) + ": a scenario file may be at most " +
         formatByteSize(kMaxFileBytes) + " (a scenario is a few hundred bytes of YAML)";
}

std::string echo(std::string_view text) {
  if (text.size() <= kMaxEchoed) return std::string(text);
  std::size_t keep = kMaxEchoed;
  // Never end inside a UTF-8 sequence: back off continuation bytes (10xxxxxx) and their lead.
  if ((static_cast<unsigned char>(text[keep]) & 0xC0) == 0x80) {
    while (keep > 0 && (static_cast<unsigned char>(text[keep]) & 0xC0) == 0x80) --keep;
  }
  return std::string(text.substr(0, keep)) + "... (" + std::to_string(text.size()) + " bytes)";
}

std::string formatByteSize(std::size_t bytes) {
  constexpr std::array<std::pair<std::size_t, std::string_view>, 3> kUnits{{
      {std::size_t{1} << 30, "GiB"},
      {std::size_t{1} << 20, "MiB"},
      {std::size_t{1} << 10, "KiB"},
  }};
  for (const auto& [scale, unit] : kUnits) {
    if (bytes != 0 && bytes % scale == 0) return std::to_string(bytes / scale) + std::string(unit);
  }
  return std::to_string(bytes) + "B";
}

std::string formatDuration(std::chrono::milliseconds duration) {
  const auto ms = duration.count();
  if (ms != 0 && ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

}  // namespace peerconf::harness::scenario

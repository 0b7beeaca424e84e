// Scenario values: the small text formats a scenario file uses (sizes, durations, hipError_t
// names, key suggestions), kept apart from the YAML walk so that tests can drive them directly.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace peerconf::harness::scenario_values {

// "65536", "64KiB", "64 KiB", "1MiB", "3B" -> bytes; nullopt when malformed, zero or too large.
// Decimal units (KB, MB) are rejected on purpose: 64KB would be ambiguous.
std::optional<std::size_t> parseByteSize(std::string_view text);

// "500" (ms), "500ms", "2s", "1.5s" -> milliseconds; nullopt when malformed, zero, or not a whole
// number of milliseconds.
std::optional<std::chrono::milliseconds> parseDuration(std::string_view text);

// A decimal integer with an optional leading '-', nothing else (no spaces, no 0x, no '+').
std::optional<std::int64_t> parseInteger(std::string_view text);
// A decimal unsigned 64-bit integer, nothing else.
std::optional<std::uint64_t> parseUnsigned(std::string_view text);
// A finite decimal number ("0.5", "1", "1e-3").
std::optional<double> parseNumber(std::string_view text);

// hipErrorOutOfMemory -> 2; nullopt for names the harness does not know (hipSuccess included).
std::optional<int> hipErrorCode(std::string_view name);
// Every hipError_t name the harness knows, hipSuccess excluded.
std::span<const std::string_view> hipErrorNames();

// The candidate closest to `word` by edit distance, when close enough to be a plausible typo.
std::optional<std::string_view> closest(std::string_view word,
                                        std::span<const std::string_view> candidates);

// "did you mean 'x'?" or, when nothing is close, "expected one of: a, b, c".
std::string suggestion(std::string_view word, std::span<const std::string_view> candidates);

// 65536 -> "64KiB", 1000 -> "1000B"; 2000ms -> "2s", 250ms -> "250ms" (for messages, reports).
std::string formatByteSize(std::size_t bytes);
std::string formatDuration(std::chrono::milliseconds duration);

}  // namespace peerconf::harness::scenario_values

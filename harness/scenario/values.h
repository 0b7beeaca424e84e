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

namespace peerconf::harness::scenario {

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
// O(length) memory; candidates whose length differs too much are not compared, and a word
// longer than any plausible name (64 bytes) gets no suggestion at all.
std::optional<std::string_view> closest(std::string_view word,
                                        std::span<const std::string_view> candidates);

// "did you mean 'x'?" or, when nothing is close, "expected one of: a, b, c".
std::string suggestion(std::string_view word, std::span<const std::string_view> candidates);

// The most a scenario file may hold: 256KiB, hundreds of times the suite's largest (about 1KiB).
// The YAML parser takes about 0.3 s and 7 bytes of memory a byte on a long scalar; the cap bounds
// both before it starts.
inline constexpr std::size_t kMaxFileBytes = std::size_t{256} << 10;
// "more than 256KiB: a scenario file may be at most 256KiB ..." (the error for a larger one).
std::string tooLarge();

// User text as an error message echoes it: as is up to 80 bytes, else its first 80 bytes (not
// ending inside a UTF-8 sequence) and "... (N bytes)". Every message that quotes a file's key
// or value goes through this, so a huge key cannot make a huge message.
std::string echo(std::string_view text);

// 65536 -> "64KiB", 1000 -> "1000B"; 2000ms -> "2s", 250ms -> "250ms" (for messages, reports).
std::string formatByteSize(std::size_t bytes);
std::string formatDuration(std::chrono::milliseconds duration);

}  // namespace peerconf::harness::scenario

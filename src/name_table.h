// A two-way table of an enum's names, kept next to its enum: `inline constexpr NameTable<E, N>
// kENames{{{E::kA, "a"}, ...}}` in the enum's header, then toString and the name's lookup both
// read it (scenario files, JSON records and reports use the same names). At the root of src/, so
// that every layer (the layouts, the fault vocabulary, the harness's model) shares one.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace peerconf {

template <typename Enum, std::size_t N>
struct NameTable {
  std::array<std::pair<Enum, std::string_view>, N> entries;

  // The name of `value`; nullopt for a value the table does not list.
  constexpr std::optional<std::string_view> find(Enum value) const {
    for (const auto& [e, name] : entries) {
      if (e == value) return name;
    }
    return std::nullopt;
  }
  // The value named `name`; nullopt for a name the table does not list.
  constexpr std::optional<Enum> find(std::string_view name) const {
    for (const auto& [e, known] : entries) {
      if (known == name) return e;
    }
    return std::nullopt;
  }
  // The name of `value`, or `fallback` for one the table does not list.
  std::string name(Enum value, std::string_view fallback = "unknown") const {
    return std::string(find(value).value_or(fallback));
  }
  // Every name, in the table's order (for "expected one of ..." and did-you-mean).
  constexpr std::array<std::string_view, N> names() const {
    std::array<std::string_view, N> out{};
    for (std::size_t i = 0; i < N; ++i) out[i] = entries[i].second;
    return out;
  }
  // Every value, in the table's order.
  constexpr std::array<Enum, N> values() const {
    std::array<Enum, N> out{};
    for (std::size_t i = 0; i < N; ++i) out[i] = entries[i].first;
    return out;
  }
  constexpr Enum value(std::size_t index) const { return entries[index].first; }
  constexpr std::size_t size() const { return N; }
};

// A table of `entries`, its size counted from them: `nameTable<E>({{E::kA, "a"}, ...})`.
template <typename Enum, std::size_t N>
constexpr NameTable<Enum, N> nameTable(const std::pair<Enum, std::string_view> (&entries)[N]) {
  NameTable<Enum, N> table{};
  for (std::size_t i = 0; i < N; ++i) table.entries[i] = entries[i];
  return table;
}

}  // namespace peerconf

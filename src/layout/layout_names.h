// Layout names as scenarios write them, for the host side (parsing, reports), and how findings
// name a tag and a slot.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "layout/layout.h"

namespace peerconf::layout {

// "reference" -> kReference, ...; nullopt for a name no layout has.
std::optional<LayoutKind> layoutKindFromName(std::string_view name);

// Every layout's name, the reference first.
std::vector<std::string> layoutNames();

// True for the broken layouts shipped as negative controls.
bool isNegativeControl(LayoutKind kind);

// "tag(gen 0x1a2b3c4d, epoch 17)".
std::string describeTag(std::uint64_t tag);

// "slot (1, source 2)".
std::string describeSlot(int slot, int source);

}  // namespace peerconf::layout

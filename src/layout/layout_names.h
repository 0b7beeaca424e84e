// Layout names as scenarios write them, for the host side (parsing, reports).
#pragma once

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

}  // namespace peerconf::layout

// Layout names.
#include "layout/layout_names.h"

namespace peerconf::layout {

namespace {

constexpr LayoutKind kKinds[kLayoutKinds] = {
    LayoutKind::kReference,    LayoutKind::kSingleBuffer,          LayoutKind::kEpochGe,
    LayoutKind::kNoGeneration, LayoutKind::kTagBeforePayload,      LayoutKind::kZeroThenPush,
    LayoutKind::kChunkTagged,  LayoutKind::kChunkTagBeforePayload, LayoutKind::kRelaxedTag,
};

}  // namespace

std::optional<LayoutKind> layoutKindFromName(std::string_view name) {
  for (LayoutKind kind : kKinds) {
    if (name == layoutName(kind)) return kind;
  }
  return std::nullopt;
}

std::vector<std::string> layoutNames() {
  std::vector<std::string> names;
  for (LayoutKind kind : kKinds) names.emplace_back(layoutName(kind));
  return names;
}

bool isNegativeControl(LayoutKind kind) {
  return kind != LayoutKind::kReference && kind != LayoutKind::kChunkTagged;
}

}  // namespace peerconf::layout

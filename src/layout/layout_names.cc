// Layout names, and the text findings use for a tag and a slot.
#include "layout/layout_names.h"

#include <cstdio>
#include <utility>

#include "layout/tag.h"
#include "name_table.h"

namespace peerconf::layout {

namespace {

// Every layout, the reference first, named by layoutName (layout.h: device code names them too).
constexpr std::pair<LayoutKind, std::string_view> entry(LayoutKind kind) {
  return {kind, layoutName(kind)};
}

constexpr auto kLayoutNames = nameTable<LayoutKind>({
    entry(LayoutKind::kReference),
    entry(LayoutKind::kSingleBuffer),
    entry(LayoutKind::kEpochGe),
    entry(LayoutKind::kNoGeneration),
    entry(LayoutKind::kTagBeforePayload),
    entry(LayoutKind::kZeroThenPush),
    entry(LayoutKind::kChunkTagged),
    entry(LayoutKind::kChunkTagBeforePayload),
    entry(LayoutKind::kRelaxedTag),
    entry(LayoutKind::kWaitNamesSelf),
    entry(LayoutKind::kAckBeforeRead),
    entry(LayoutKind::kDeviceScopeFence),
    entry(LayoutKind::kReaderWithoutAcquire),
    entry(LayoutKind::kRearmBeforeRead),
    entry(LayoutKind::kEpochSignedGe),
});

}  // namespace

std::optional<LayoutKind> layoutKindFromName(std::string_view name) {
  return kLayoutNames.find(name);
}

std::vector<std::string> layoutNames() {
  std::vector<std::string> names;
  for (std::string_view name : kLayoutNames.names()) names.emplace_back(name);
  return names;
}

std::string describeTag(std::uint64_t tag) {
  char text[64];
  std::snprintf(text, sizeof text, "tag(gen 0x%08x, epoch %u)", tagGeneration(tag), tagEpoch(tag));
  return text;
}

std::string describeSlot(int slot, int source) {
  return "slot (" + std::to_string(slot) + ", source " + std::to_string(source) + ")";
}

bool isNegativeControl(LayoutKind kind) {
  return kind != LayoutKind::kReference && kind != LayoutKind::kChunkTagged;
}

}  // namespace peerconf::layout

// The fault vocabulary's names.
#include "faults/fault_spec.h"

#include <array>
#include <utility>

namespace peerconf::faults {

namespace {

constexpr auto kSiteList = kSiteNames.values();
constexpr auto kPointList = kPointNames.values();

// The codes of hip_runtime_api.h a scenario is likely to name; enough to make reports readable
// without linking any runtime.
constexpr NameTable<int, 17> kHipErrors{{{
    {0, "hipSuccess"},
    {1, "hipErrorInvalidValue"},
    {2, "hipErrorOutOfMemory"},
    {3, "hipErrorNotInitialized"},
    {17, "hipErrorInvalidDevicePointer"},
    {100, "hipErrorNoDevice"},
    {101, "hipErrorInvalidDevice"},
    {201, "hipErrorInvalidContext"},
    {205, "hipErrorMapFailed"},
    {206, "hipErrorUnmapFailed"},
    {208, "hipErrorAlreadyMapped"},
    {211, "hipErrorNotMapped"},
    {217, "hipErrorPeerAccessUnsupported"},
    {400, "hipErrorInvalidHandle"},
    {700, "hipErrorIllegalAddress"},
    {801, "hipErrorNotSupported"},
    {999, "hipErrorUnknown"},
}}};

}  // namespace

std::span<const Site> allSites() { return kSiteList; }
std::span<const Point> allPoints() { return kPointList; }

std::string_view siteName(Site site) { return kSiteNames.find(site).value_or("unknown"); }
std::string_view pointName(Point point) { return kPointNames.find(point).value_or("unknown"); }
std::optional<Site> siteFromName(std::string_view name) { return kSiteNames.find(name); }
std::optional<Point> pointFromName(std::string_view name) { return kPointNames.find(name); }
std::string_view entryPartName(EntryPart part) {
  return kEntryPartNames.find(part).value_or("unknown");
}
std::optional<EntryPart> entryPartFromName(std::string_view name) {
  return kEntryPartNames.find(name);
}
std::string_view seamCallName(SeamCall call) {
  return kSeamCallNames.find(call).value_or("unknown");
}

int defaultError(Site site) {
  switch (site) {
    case Site::kAlloc:
    case Site::kAllocTable:
      return 2;  // hipErrorOutOfMemory
    case Site::kGetHandle:
    case Site::kOpen:
    case Site::kClose:
    case Site::kFree:
    case Site::kCopyTable:
      return 1;  // hipErrorInvalidValue
    default:
      return 0;
  }
}

std::string hipErrorName(int code) {
  if (std::optional<std::string_view> name = kHipErrors.find(code)) return std::string(*name);
  return "hipError(" + std::to_string(code) + ")";
}

std::optional<int> hipErrorCode(std::string_view name) { return kHipErrors.find(name); }

std::span<const std::pair<int, std::string_view>> hipErrorNames() { return kHipErrors.entries; }

}  // namespace peerconf::faults

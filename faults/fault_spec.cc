// The fault vocabulary's names.
#include "faults/fault_spec.h"

#include <array>
#include <utility>

namespace peerconf::faults {

namespace {

constexpr std::array<std::pair<Site, std::string_view>, 14> kSites{{
    {Site::kAlloc, "alloc"},
    {Site::kGetHandle, "get-handle"},
    {Site::kOpen, "open"},
    {Site::kClose, "close"},
    {Site::kFree, "free"},
    {Site::kAllocTable, "alloc-table"},
    {Site::kCopyTable, "copy-table"},
    {Site::kHandleCorrupt, "handle-corrupt"},
    {Site::kHandleStale, "handle-stale"},
    {Site::kGroupFail, "group-fail"},
    {Site::kDelay, "delay"},
    {Site::kDeath, "death"},
    {Site::kHang, "hang"},
    {Site::kNotReady, "not-ready"},
}};

constexpr std::array<std::pair<Point, std::string_view>, 5> kPoints{{
    {Point::kBeforeConstruct, "before-construct"},
    {Point::kExchange, "exchange"},
    {Point::kOpen, "open"},
    {Point::kAgree, "agree"},
    {Point::kClose, "close"},
}};

constexpr auto kSiteList = [] {
  std::array<Site, kSites.size()> out{};
  for (std::size_t i = 0; i < kSites.size(); ++i) out[i] = kSites[i].first;
  return out;
}();

constexpr auto kPointList = [] {
  std::array<Point, kPoints.size()> out{};
  for (std::size_t i = 0; i < kPoints.size(); ++i) out[i] = kPoints[i].first;
  return out;
}();

// The codes of hip_runtime_api.h a scenario is likely to name; enough to make reports readable
// without linking any runtime.
constexpr std::array<std::pair<int, std::string_view>, 17> kHipErrors{{
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
}};

template <typename Table, typename Key>
std::string_view nameIn(const Table& table, Key key) {
  for (const auto& [value, name] : table) {
    if (value == key) return name;
  }
  return "unknown";
}

template <typename Table>
auto valueIn(const Table& table, std::string_view name)
    -> std::optional<typename Table::value_type::first_type> {
  for (const auto& [value, known] : table) {
    if (known == name) return value;
  }
  return std::nullopt;
}

}  // namespace

std::span<const Site> allSites() { return kSiteList; }
std::span<const Point> allPoints() { return kPointList; }

std::string_view siteName(Site site) { return nameIn(kSites, site); }
std::string_view pointName(Point point) { return nameIn(kPoints, point); }
std::optional<Site> siteFromName(std::string_view name) { return valueIn(kSites, name); }
std::optional<Point> pointFromName(std::string_view name) { return valueIn(kPoints, name); }

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
  const std::string_view name = nameIn(kHipErrors, code);
  if (name != "unknown") return std::string(name);
  return "hipError(" + std::to_string(code) + ")";
}

std::optional<int> hipErrorCode(std::string_view name) { return valueIn(kHipErrors, name); }

std::span<const std::pair<int, std::string_view>> hipErrorNames() { return kHipErrors; }

}  // namespace peerconf::faults

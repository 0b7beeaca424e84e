// The layout a scenario's `dataplane:` names, as the driver, the device and the checkers build it.
#include "model/dataplane_spec.h"

#include <stdexcept>

#include "layout/layout_names.h"

namespace peerconf::harness::model {

layout::Layout makeLayout(const Spec& spec, int ranks) {
  const auto kind = layout::layoutKindFromName(spec.layout);
  if (!kind) throw std::invalid_argument("unknown data-plane layout '" + spec.layout + "'");
  layout::Layout out;
  out.kind = *kind;
  out.ranks = ranks;
  out.depth = spec.depth;
  out.payloadWords = spec.payload;
  out.windowNs = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(spec.window).count());
  return out;
}

}  // namespace peerconf::harness::model

// The layout a scenario's `dataplane:` names, as the driver, the device and the checkers build it.
#include "model/dataplane_spec.h"

#include <stdexcept>

#include "layout/layout_names.h"

namespace peerconf::harness::model {

layout::Shape shapeOf(const Spec& spec, int ranks) {
  layout::Shape shape;
  shape.ranks = ranks;
  shape.depth = spec.depth;
  shape.payloadWords = spec.payload;
  shape.windowNs = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(spec.window).count());
  shape.values = spec.values;
  shape.startEpoch = spec.startEpoch;
  return shape;
}

layout::Layout makeLayout(const Spec& spec, int ranks) {
  const auto kind = layout::layoutKindFromName(spec.layout);
  if (!kind) throw std::invalid_argument("unknown data-plane layout '" + spec.layout + "'");
  return layout::Layout::of(*kind, shapeOf(spec, ranks));
}

}  // namespace peerconf::harness::model

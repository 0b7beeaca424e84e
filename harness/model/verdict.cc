// Names of the conformance properties, as reports print them.
#include "model/verdict.h"

namespace peerconf::harness {

std::string shortName(Property property) {
  switch (property) {
    case Property::kC1Uniform:
      return "C1";
    case Property::kC2Message:
      return "C2";
    case Property::kC3Cleanup:
      return "C3";
    case Property::kC4Addresses:
      return "C4";
    case Property::kC5Agreement:
      return "C5";
    case Property::kC6NoOverwrite:
      return "C6";
    case Property::kC7NoStale:
      return "C7";
    case Property::kC8Bounded:
      return "C8";
  }
  return "C?";
}

std::string toString(Property property) {
  switch (property) {
    case Property::kC1Uniform:
      return "C1 uniform outcome";
    case Property::kC2Message:
      return "C2 message";
    case Property::kC3Cleanup:
      return "C3 cleanup";
    case Property::kC4Addresses:
      return "C4 addresses";
    case Property::kC5Agreement:
      return "C5 agreement";
    case Property::kC6NoOverwrite:
      return "C6 no unread data overwritten";
    case Property::kC7NoStale:
      return "C7 no stale acceptance";
    case Property::kC8Bounded:
      return "C8 bounded";
  }
  return "C? unknown";
}

}  // namespace peerconf::harness

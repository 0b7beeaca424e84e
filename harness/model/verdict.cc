// Names of the conformance properties, as reports print them.
#include "model/verdict.h"

#include <algorithm>
#include <cctype>

namespace peerconf::harness::model {

std::string shortName(Property property) { return kPropertyNames.name(property, "C?"); }

std::string toString(Property property) { return kPropertyTitles.name(property, "C? unknown"); }

namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

bool namesProperty(std::string_view entry, Property property) {
  const std::string e = lower(entry);
  const std::string id = lower(shortName(property));
  if (e == id || e == lower(toString(property))) return true;
  return e.size() > id.size() && e.compare(0, id.size(), id) == 0 &&
         !std::isdigit(static_cast<unsigned char>(e[id.size()]));
}

}  // namespace peerconf::harness::model

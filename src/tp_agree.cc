// tpAgree over the Group seam.
#include "tp_agree.h"

namespace peerconf {

bool tpAgree(bool ok, Group* group) {
  if (group == nullptr) return ok;
  return group->allReduceMin(ok ? 1 : 0) != 0;
}

}  // namespace peerconf

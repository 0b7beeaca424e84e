// tpAgree: the agreement every TP rank reaches before anything collective.
#pragma once

#include "group.h"

namespace peerconf {

// True when every rank of `group` passed `ok` true: a MIN all-reduce of an int. Every rank must
// call it at the same point. A null group (a single rank) returns `ok` without communicating.
bool tpAgree(bool ok, Group* group);

}  // namespace peerconf

// Planted runtimes: the rank's real backend wrapped below the harness's fault and recording
// decorators (model::RuntimeDecorator), answering a handle otherwise than the mocked runtime and
// CUDA do. No core can (a core sits above the decorators), so these are the only way to pose a
// handle fault without its effect on the mocked runtime: the negative controls of the judge's
// "fault without effect" rule (scenarios/judge/fault-without-effect-*.yaml). Each is registered
// with the production core; the kebab-case name after "core:" is its stable name.
#pragma once

#include "model/core_under_test.h"

namespace peerconf::planted {

// core: runtime-opens-refused-handles
// A runtime that opens a handle the mocked runtime refuses (a stale one, a corrupted one) onto a
// fresh block the size of the rank's first allocation, as a runtime that maps whatever a freed
// allocation's place holds now would; closing that mapping frees the block. Refused by the judge:
// "fault without effect" (the runtime opened the stale handle), every other failure following
// from it.
harness::model::RuntimeDecorator opensRefusedHandlesRuntime();

// core: runtime-refuses-reused-handles
// A runtime that refuses (hipErrorInvalidHandle) a handle whose mapping does not hold an exported
// buffer's signature (faults/faulty_backend.h: the harness signs every buffer a rank exports), as
// a runtime that knew the allocation a handle named is gone would: handle-aliased's handle, whose
// block another allocation took. Refused by the judge: "fault without effect" (the runtime
// refused the aliased handle).
harness::model::RuntimeDecorator refusesReusedHandlesRuntime();

}  // namespace peerconf::planted

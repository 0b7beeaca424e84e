// The data plane as GPU kernels (`--runtime gpu`): the entry the rank runner calls instead of the
// host driver. Built over src/gpu_kernels when this build has them (the CUDA variant); otherwise
// every call reports an error result saying so (device_none.cc), so a data plane asked for under
// `--runtime gpu` of such a build fails C6/C7/C8 instead of passing unseen.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "group.h"
#include "ipc_backend.h"
#include "model/dataplane_result.h"
#include "model/dataplane_spec.h"
#include "peer_buffer.h"

namespace peerconf::harness::dataplane {

// True when this build runs the data plane as GPU kernels.
bool deviceDataPlaneBuilt();

// Once per process and device, before the harness's first device-memory baseline (RankSettle):
// loads the kernels and allocates for good the device arrays every run reuses (gpu_kernels::
// warmUp; about 56 MiB for the largest trace), so that no data-plane run shows as a drop in free
// device memory. Nothing in a build without GPU kernels.
void warmUpDevice();

// Runs rank `rank`'s part of `spec` as a kernel on the current device over the buffers at
// `addresses` (every rank's buffer as this rank maps it; `local` is its own). Collective over
// `group` like the host driver's runRank (the same three calls: agree on the generation, a
// barrier once every buffer is prefilled, a barrier at the end), with the generation check and
// the prefill done on a host copy of this rank's buffer through `backend` (the same prefill as the
// host driver's). Waits time out after `timeout`; the kernel is bounded by `hostBound` (past it
// the host aborts the data plane on every rank through the abort word). The result carries the
// kernel's history and in-band findings converted to the host's form (device_mapping.h).
model::Result runOnDevice(const model::Spec& spec, int rank,
                          const std::vector<std::int64_t>& addresses, DeviceBytes local,
                          IpcBackend& backend, Group* group, std::chrono::milliseconds timeout,
                          std::chrono::milliseconds hostBound);

}  // namespace peerconf::harness::dataplane

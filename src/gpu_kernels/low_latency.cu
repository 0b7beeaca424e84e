// The low-latency layout's kernels (CUDA builds): the built-in layout written against the
// protocol API (layout/low_latency.h) compiled into the data-plane kernel template
// (layout_kernel.h), as a team's .cu would, so that its scenario files run under --runtime gpu.
#include "gpu_kernels/layout_kernel.h"
#include "gpu_kernels/protocol_kernels.h"
#include "layout/low_latency.h"

namespace peerconf::gpu_kernels {

void registerBuiltinLayoutKernels() {
  layout::LowLatency correct;
  registerLayoutKernels("low-latency", correct);
  layout::LowLatency noInit;
  noInit.kind = layout::LowLatencyKind::kNoInit;
  registerLayoutKernels("low-latency-no-init", noInit);
}

}  // namespace peerconf::gpu_kernels

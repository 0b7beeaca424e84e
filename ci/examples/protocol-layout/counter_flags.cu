// myteam's layouts as GPU kernels: the same counter_flags.h compiled by nvcc (or hipcc) into
// peerconf's data-plane kernel template (gpu_kernels/layout_kernel.h), so that
// `myteam-peerconf run --launcher mpi --runtime gpu` runs the scenario files on the GPUs, judged
// by C6/C7/C8 from the kernels' trace as on the host.
#include "counter_flags.h"
#include "counter_flags_gpu.h"
#include "gpu_kernels/layout_kernel.h"

namespace myteam {

void registerCounterFlagsGpu() {
  for (const CounterFlagsEntry& e : kCounterFlagsEntries) {
    peerconf::gpu_kernels::registerLayoutKernels(e.name, CounterFlags{{}, e.kind});
  }
}

}  // namespace myteam

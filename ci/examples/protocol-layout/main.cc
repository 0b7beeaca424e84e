// myteam-peerconf: peerconf's command line with myteam's layouts registered, so that scenario
// files can say `layout: myteam/counter-flags` or `layout: myteam/lamport`. Under mpirun and in
// forked children the executable runs itself again, so the layouts are there on every rank. Built
// with peerconf's GPU kernels (MYTEAM_WITH_GPU), it registers the layouts' kernels too, for
// `--runtime gpu`.
#include "counter_flags.h"
#include "driver/command_line.h"
#include "lamport.h"
#include "layout/register.h"
#if MYTEAM_WITH_GPU
#include "counter_flags_gpu.h"
#include "lamport_gpu.h"
#endif

int main(int argc, char** argv) {
  for (const myteam::CounterFlagsEntry& e : myteam::kCounterFlagsEntries) {
    peerconf::layout::registerLayout(e.name, e.what, myteam::CounterFlags{{}, e.kind}, e.control);
  }
  for (const myteam::LamportEntry& e : myteam::kLamportEntries) {
    peerconf::layout::registerLayout(e.name, e.what, myteam::Lamport{{}, e.kind}, e.control);
  }
#if MYTEAM_WITH_GPU
  myteam::registerCounterFlagsGpu();
  myteam::registerLamportGpu();
#endif
  return peerconf::harness::driver::runCommandLine(argc, argv);
}

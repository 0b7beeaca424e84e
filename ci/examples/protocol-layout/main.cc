// myteam-peerconf: peerconf's command line with myteam's layouts registered, so that scenario
// files can say `layout: myteam/counter-flags`. Under mpirun and in forked children the
// executable runs itself again, so the layouts are there on every rank.
#include "counter_flags.h"
#include "driver/command_line.h"

int main(int argc, char** argv) {
  myteam::registerCounterFlags();
  return peerconf::harness::driver::runCommandLine(argc, argv);
}

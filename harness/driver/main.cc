// peerconf: the command line (command_line.h), with the planted cores (tests/planted/) that
// scenario files name with `core:` to prove the checkers.
#include "driver/command_line.h"
#include "planted/registry.h"

int main(int argc, char** argv) {
  return peerconf::harness::driver::runCommandLine(argc, argv, peerconf::planted::addPlantedCores);
}

// `peerconf explore`: dispatch to the search or the enumeration, print, and pick the exit status.
#include "explore/command.h"

#include <ostream>
#include <stdexcept>

#include "launch/interrupt.h"

namespace peerconf::harness::explore {

int runExploreCommand(const ExploreCommand& command, std::ostream& out, std::ostream& err) {
  try {
    if (!command.systematic.file.empty()) {
      const SystematicResult result = exploreSystematic(command.systematic, out);
      return printSystematic(result, command.systematic, out);
    }
    if (command.exhaustive) {
      const ExhaustiveResult result = exhaustive(command.enumeration, out);
      printSummary(result, command.enumeration, out);
      if (result.interrupted != 0) return launch::interruptedExitCode(result.interrupted);
      if (result.invalid > 0) return 2;
      return result.ok() ? 0 : 1;
    }
    const ExploreResult result = explore(command.search, out);
    printSummary(result, command.search, out);
    return exitCode(result);
  } catch (const std::exception& e) {
    err << "peerconf explore: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace peerconf::harness::explore

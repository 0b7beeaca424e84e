// `peerconf explore`: the options of the subcommand and what it runs (the search, or the
// exhaustive enumeration), so that main.cc only declares the flags.
#pragma once

#include <iosfwd>

#include "explore/exhaustive.h"
#include "explore/explorer.h"
#include "explore/systematic.h"

namespace peerconf::harness::explore {

struct ExploreCommand {
  ExploreOptions search;
  bool exhaustive = false;  // --exhaustive: enumerate instead of search
  ExhaustiveOptions enumeration;
  SystematicOptions systematic;  // --systematic FILE: enumerate one file's interleavings
};

// Runs the command and prints its summary. Exit status: 0 nothing found, 1 a failing case (or
// non-determinism), 2 usage error or a bug of the generator.
int runExploreCommand(const ExploreCommand& command, std::ostream& out, std::ostream& err);

}  // namespace peerconf::harness::explore

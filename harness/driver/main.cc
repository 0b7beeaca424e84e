// peerconf: the command line. `run` drives scenario files through a launcher and reports;
// `validate` checks scenario files; `explain` derives what a scenario must show; `explore` searches
// fault spaces (see --help of each).
#include <CLI/CLI.hpp>
#include <iostream>

#include "driver/suite.h"
#include "explore/command.h"
#include "explore/explain.h"
#include "explore/mpi_explore.h"
#include "mpirun/mpi_launcher.h"
#include "planted/registry.h"

int main(int argc, char** argv) {
  using peerconf::harness::Runtime;
  CLI::App app{
      "peerconf: fault-injection and conformance harness for peer-memory handshakes (PeerBuffer,"
      " tpAgree).\nExit status: 0 all passed, 1 a scenario failed, 2 usage or input error."};
  app.require_subcommand(1);

  peerconf::harness::SuiteOptions run;
  // The cores a scenario's `core:` can name: production and the planted ones (tests/planted/).
  peerconf::planted::addPlantedCores(run.cores);
  std::string runtime = "mock";
  std::string clock = "sim";
  std::uint64_t seed = 0;
  auto* runCmd = app.add_subcommand(
      "run",
      "Run scenario files (FILES or DIRS, searched recursively for *.yaml) and check C1-C8.\n"
      "Threads (default): every rank a thread of this process over the mocked HIP runtime.\n"
      "MPI: every rank a process; one mpirun runs the whole list. Without mpirun around it,\n"
      "`--launcher mpi` starts `mpirun -np <most ranks> --oversubscribe` on itself.");
  runCmd->add_option("paths", run.paths, "Scenario files or directories")->required();
  runCmd->add_option("--launcher", run.launcher, "threads | mpi")
      ->check(CLI::IsMember({"threads", "mpi"}))
      ->capture_default_str();
  runCmd
      ->add_option("--runtime", runtime,
                   "mock (mocked HIP runtime) | gpu (one GPU a rank; "
                   "needs --launcher mpi and a GPU build)")
      ->check(CLI::IsMember({"mock", "gpu"}))
      ->capture_default_str();
  runCmd
      ->add_option("--clock", clock,
                   "threads: sim (the default; simulated time: waits take no real time, one rank "
                   "runs at a time in an order drawn from the run's seed (a scheduler of the PCT "
                   "kind), so a seed replays its interleaving; event times and C8 are simulated; "
                   "the data plane's memory is as weak as a GPU's: relaxed stores land late and "
                   "out of order) | real (the steady clock; ranks run in parallel as the OS "
                   "schedules them). MPI and GPU runs always use real time. A file with `clock:` "
                   "runs only on that clock")
      ->check(CLI::IsMember({"real", "sim"}))
      ->capture_default_str();
  runCmd->add_option("--filter", run.filter, "Only scenarios whose name or path matches GLOB");
  auto* seedOpt =
      runCmd->add_option("--seed", seed, "Seed for every scenario (default: each file's seed)");
  runCmd->add_option("--repeat", run.repeat, "Run each scenario N times, seeds S, S+1, ...")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  runCmd->add_option("--junit", run.junit, "Write a JUnit XML report to FILE");
  runCmd->add_option("--trace", run.trace,
                     "Write a trace-event JSON timeline to FILE (Perfetto, chrome://tracing)");
  runCmd->add_option("--html", run.html,
                     "Write one self-contained HTML report to FILE (summary, verdicts, reproduce "
                     "lines, a swimlane picture per run; no network needed to view it)");
  runCmd->add_flag("--progress", run.progress, "Prefix each line with [i/n]");
  runCmd
      ->add_option("--nodes", run.simulatedNodes,
                   "MPI: treat this box as K nodes of consecutive ranks (TP groups never span "
                   "nodes); default: nodes are real (shared memory)")
      ->check(CLI::Range(0, 1 << 20));
  runCmd
      ->add_option("--np", run.np,
                   "MPI outside mpirun: how many ranks to start (default: the most any scenario "
                   "needs); more ranks run several scenarios at once")
      ->check(CLI::Range(0, 1 << 20));
  runCmd
      ->add_option("--kill-mode", run.killMode,
                   "mpi: simulate (a dead or hung rank stops making calls) | signal (it is "
                   "SIGKILLed or SIGSTOPped for real; this process supervises mpirun, reports, "
                   "cleans up and restarts the rest of the list in a new mpirun)")
      ->check(CLI::IsMember({"simulate", "signal"}))
      ->capture_default_str();
  // Set by the signal-mode supervisor on the ranks it starts; not for users.
  runCmd->add_option("--run-dir", run.runDir)->group("");
  runCmd->add_option("--first", run.first)->group("");
  runCmd->add_flag("!--no-fork", run.fork,
                   "threads: run every scenario in this process instead of a forked child of its "
                   "own (to debug; a crashing core then takes the whole run down)");
  std::string coreName;
  runCmd->add_option(
      "--core", coreName,
      "Run every scenario that names no `core:` with this core in place of the "
      "production one: a planted core must make the suite fail (scenarios/README.md, "
      "\"Planted cores\"; the names are in `peerconf validate --help`)");
  runCmd->add_flag("!--no-coverage", run.requireCoverage,
                   "Do not fail a run in which a certain fault (probability 1) of its scenario "
                   "never fired on a rank it names");

  std::vector<std::string> validatePaths;
  auto* validateCmd = app.add_subcommand(
      "validate",
      "Parse and validate scenario files; print FILE:LINE:COL: message for each error, and\n"
      "FILE:LINE:COL: warning: ... for a fault the timeline makes unreachable (exit status 0).\n"
      "`core:` may name: " +
          [&] {
            std::string names;
            for (const auto& name : run.cores.names()) names += (names.empty() ? "" : ", ") + name;
            return names;
          }());
  validateCmd->add_option("paths", validatePaths, "Scenario files or directories")->required();
  std::string validateRuntime = "mock";
  validateCmd
      ->add_option("--runtime", validateRuntime,
                   "mock | gpu: also reject what the GPU data plane cannot run (more ranks than "
                   "its kernels address, more late entries or history than they hold)")
      ->check(CLI::IsMember({"mock", "gpu"}))
      ->capture_default_str();

  peerconf::harness::explore::ExploreCommand explore;
  std::uint64_t exploreSeed = 0;
  auto* exploreCmd = app.add_subcommand(
      "explore",
      "Search the fault space in thread mode over the mocked HIP runtime and check C1-C5, C8.\n"
      "Default: rapidcheck generates scenarios (1..--max-ranks ranks, random faults over every\n"
      "site, not-ready included, delays, seeds; one case in eight without the runner's\n"
      "agreement, `runner: {agree_first: false}`), each with an expectation derived from its\n"
      "faults; the first failure\n"
      "is shrunk to a minimal case and written to --out as a scenario file (run it with\n"
      "`peerconf run FILE`) with rapidcheck's reproduce string. A fraction of passing cases is\n"
      "re-run to check that the harness is deterministic (a re-run that ends differently fails;\n"
      "one whose ranks only interleave differently is reported).\n"
      "--exhaustive: every subset of open failures over the (rank, peer) pairs of --ranks ranks\n"
      "(2^(N(N-1)) cases), each failure written to --out; --with-late and --with-table cross\n"
      "them with late ranks and with address-table failures (alloc-table, copy-table).\n"
      "Under mpirun (`mpirun -np K peerconf explore ...`), each process explores its own seed\n"
      "(base + rank; failures in --out/rank-R) and rank 0 reports the total (search mode only).\n"
      "Exit status: 0 nothing found, 1 a failing case or a re-run that ended differently,\n"
      "2 usage error.");
  exploreCmd->add_option("--cases", explore.search.cases, "Passing cases before the search stops")
      ->check(CLI::Range(1, 100000000))
      ->capture_default_str();
  auto* exploreSeedOpt =
      exploreCmd->add_option("--seed", exploreSeed, "rapidcheck seed (default: random, printed)");
  exploreCmd
      ->add_option("--max-ranks", explore.search.generator.maxRanks, "Most ranks a scenario has")
      ->check(CLI::Range(1, 16))
      ->capture_default_str();
  exploreCmd->add_option("--out", explore.search.outDir, "Directory for failing cases (YAML)")
      ->capture_default_str();
  exploreCmd
      ->add_option("--recheck-fraction", explore.search.recheckFraction,
                   "Fraction of passing cases re-run to compare their event logs")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  exploreCmd->add_option("--reproduce", explore.search.reproduce,
                         "Replay the failing case (and its shrinking) from the reproduce string "
                         "a failure printed; give the same --max-ranks");
  exploreCmd->add_flag("!--no-shrink", explore.search.shrink,
                       "Report the first failing case as found, without shrinking it");
  exploreCmd->add_flag("--exhaustive", explore.exhaustive,
                       "Enumerate every subset of open failures instead of searching");
  exploreCmd->add_option("--ranks", explore.enumeration.ranks, "--exhaustive: ranks (1..4)")
      ->check(CLI::Range(1, 4))
      ->capture_default_str();
  exploreCmd->add_flag("--with-late", explore.enumeration.withLate,
                       "--exhaustive: cross every subset with one late rank at each point "
                       "(1 + 5N times the cases, each at least --late-delay long)");
  exploreCmd->add_flag("--with-table", explore.enumeration.withTable,
                       "--exhaustive: cross every subset with a device address table failure "
                       "(alloc-table, copy-table) on each rank and on every rank (up to 3 + 2N "
                       "times the cases; ranks whose opens fail never reach their table)");
  int lateMs = static_cast<int>(explore.enumeration.lateDelay.count());
  exploreCmd->add_option("--late-delay", lateMs, "--exhaustive --with-late: how late, in ms")
      ->check(CLI::Range(1, 600000))
      ->capture_default_str();
  int exhaustiveDeadlineMs = static_cast<int>(explore.enumeration.deadline.count());
  exploreCmd
      ->add_option("--deadline", exhaustiveDeadlineMs,
                   "--exhaustive: deadline of each group call, in ms")
      ->check(CLI::Range(1, 600000))
      ->capture_default_str();
  std::string exploreClock = "sim";
  exploreCmd
      ->add_option("--clock", exploreClock,
                   "sim | real: the cases' clock (sim, the default: simulated time, deadlines, "
                   "delays and hangs take no real time and each case's interleaving is drawn "
                   "from its seed; real: the steady clock, ranks in parallel)")
      ->check(CLI::IsMember({"real", "sim"}))
      ->capture_default_str();
  exploreCmd->add_flag("--quiet", explore.search.quiet, "Only the summary, no progress lines");
  exploreCmd->add_flag("!--no-fork", explore.search.isolate,
                       "Run the cases in this process instead of a forked child (one child for "
                       "case after case, replaced after a crash); to debug");

  std::vector<std::string> explainPaths;
  peerconf::harness::explore::ExplainOptions explain;
  auto* explainCmd = app.add_subcommand(
      "explain",
      "For each scenario, print what the production core must show, derived from its\n"
      "faults by the expectation oracle `explore` uses: every rank's timeline (the points\n"
      "it reaches, each fault where it fires, where it stops and why), the outcome and\n"
      "message of every rank, and each difference from the file's `expect:` at its\n"
      "FILE:LINE:COL. What the oracle does not derive (a control's violations and planted\n"
      "core, `within`, the data plane) is stated as such; a scenario it cannot derive\n"
      "(lateness near a deadline) says why and is not compared.\n"
      "Exit status: 0 every file agrees (or is not derived, said so), 1 a difference or\n"
      "no `expect:`, 2 input error.");
  explainCmd->add_option("paths", explainPaths, "Scenario files or directories")->required();
  explainCmd->add_flag("--write-expect", explain.writeExpect,
                       "Write the derived `expect:` section into each file that differs (or has "
                       "none): only that block's text changes, comments and key order stay; a "
                       "file that agrees is not rewritten");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }

  if (*validateCmd) {
    return peerconf::harness::validateFiles(
        validatePaths, std::cout, std::cerr, run.cores,
        validateRuntime == "gpu" ? Runtime::kGpu : Runtime::kMock);
  }
  if (*explainCmd) {
    explain.cores = &run.cores;
    return peerconf::harness::explore::runExplain(explainPaths, explain, std::cout, std::cerr);
  }
  if (*exploreCmd) {
    if (*exploreSeedOpt) explore.search.seed = exploreSeed;
    explore.enumeration.outDir = explore.search.outDir;
    explore.enumeration.quiet = explore.search.quiet;
    explore.enumeration.isolate = explore.search.isolate;
    explore.search.clock = peerconf::harness::clockModeFromString(exploreClock);
    explore.enumeration.clock = explore.search.clock;
    explore.enumeration.lateDelay = std::chrono::milliseconds(lateMs);
    explore.enumeration.deadline = std::chrono::milliseconds(exhaustiveDeadlineMs);
    if (peerconf::harness::underMpirun()) {
      return peerconf::harness::explore::runExploreUnderMpi(explore, &argc, &argv, std::cout,
                                                            std::cerr);
    }
    return peerconf::harness::explore::runExploreCommand(explore, std::cout, std::cerr);
  }
  if (!coreName.empty()) {
    const peerconf::harness::CoreFactory* core = run.cores.find(coreName);
    if (core == nullptr) {
      std::string names;
      for (const auto& name : run.cores.names()) names += (names.empty() ? "" : ", ") + name;
      std::cerr << "peerconf: --core: unknown core '" << coreName << "'; the cores are: " << names
                << "\n";
      return 2;
    }
    run.core = *core;
  }
  run.runtime = runtime == "gpu" ? Runtime::kGpu : Runtime::kMock;
  run.clock = peerconf::harness::clockModeFromString(clock);
  if (*seedOpt) run.seed = seed;
  return peerconf::harness::runSuite(run, &argc, &argv, std::cout, std::cerr);
}

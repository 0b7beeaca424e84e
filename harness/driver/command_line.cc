// peerconf's command line: `run` drives scenario files through a launcher and reports;
// `validate` checks scenario files; `explain` derives what a scenario must show; `explore` searches
// fault spaces (see --help of each).
#include "driver/command_line.h"

#include <CLI/CLI.hpp>
#include <iostream>

#include "driver/suite.h"
#include "expectation/explain.h"
#include "explore/command.h"
#include "explore/mpi_explore.h"
#include "launch/interrupt.h"
#include "layout/engine.h"
#include "model/run_record.h"
#include "mpirun/mpi_launcher.h"

namespace {

// Each subcommand's options live in one struct that outlives the parse: CLI11 keeps the
// addresses it writes to.

// The cores, comma-separated: `validate --help` lists them, `run --core` names them on a typo.
std::string coreNames(const peerconf::harness::launch::CoreRegistry& cores) {
  std::string names;
  for (const auto& name : cores.names()) names += (names.empty() ? "" : ", ") + name;
  return names;
}

struct RunArgs {
  peerconf::harness::driver::SuiteOptions suite;
  std::string runtime = "mock";
  std::string clock = "sim";
  std::string engine = "fibers";
  std::uint64_t seed = 0;
  CLI::Option* seedOpt = nullptr;
  std::string coreName;
};

// --engine, for `run` and `explore`.
constexpr const char* kEngineHelp =
    "sim: what runs the ranks. fibers (the default: every rank a fiber of one OS thread; a "
    "hand-off between ranks is a user-space switch) | threads (a thread a rank, handing the turn "
    "over through the scheduler's lock and futex). The scheduler is the same: a seed runs the "
    "same interleaving, with the same trace, on both";

void addEngineOption(CLI::App& command, std::string& engine) {
  command.add_option("--engine", engine, kEngineHelp)
      ->check(CLI::IsMember({"fibers", "threads"}))
      ->capture_default_str();
  // --mock-memory beside it: every run of the command takes it (launch::setDefaultMockMemory).
  command
      .add_option_function<std::string>(
          "--mock-memory",
          [](const std::string& name) {
            peerconf::harness::launch::setDefaultMockMemory(
                peerconf::harness::launch::mockMemoryFromString(name));
          },
          "sim, mocked runtime: where device memory lives. arena (the default: one in-process "
          "file mapped once, no system call a run) | segments (a memfd a segment, mapped and "
          "unmapped as allocations and opens come and go, as on real time and under MPI). The "
          "runtime's answers are the same; the verdicts must be")
      ->check(CLI::IsMember({"arena", "segments"}));
}

// The run command's options one after the other, in --help's order: a flat list, nothing to name.
// NOLINTNEXTLINE(readability-function-size): a flat list of options (see above)
void addRunCommand(CLI::App& app, RunArgs& args) {
  auto* runCmd = app.add_subcommand(
      "run",
      "Run scenario files (FILES or DIRS, searched recursively for *.yaml) and check C1-C8.\n"
      "Threads (default): every rank a thread of this process over the mocked HIP runtime\n"
      "(on simulated time, the default clock: a fiber of one thread, see --engine).\n"
      "On simulated time the simulator checks itself first, in a few milliseconds: its weak\n"
      "memory against the litmus table's model (RC11, PTX scopes) and its scheduler's use of\n"
      "the seed (same seed, same interleaving; other seeds, other ones); on a failure nothing\n"
      "is judged and the exit status is 1.\n"
      "MPI: every rank a process; one mpirun runs the whole list. Without mpirun around it,\n"
      "`--launcher mpi` starts `mpirun -np <most ranks> --oversubscribe` on itself.\n"
      "Exit status: 0 every scenario passed, 1 a scenario (or the self-check) failed, 2 usage\n"
      "or input error.");
  runCmd->add_option("paths", args.suite.paths, "Scenario files or directories")->required();
  runCmd->add_option("--launcher", args.suite.launcher, "threads | mpi")
      ->check(CLI::IsMember({"threads", "mpi"}))
      ->capture_default_str();
  runCmd
      ->add_option("--runtime", args.runtime,
                   "mock (mocked HIP runtime) | gpu (real GPUs: one a rank, round-robin when a "
                   "node has more ranks than GPUs; needs --launcher mpi and a GPU build)")
      ->check(CLI::IsMember({"mock", "gpu"}))
      ->capture_default_str();
  runCmd
      ->add_option("--clock", args.clock,
                   "threads: sim (the default; simulated time: waits take no real time, one rank "
                   "runs at a time in an order drawn from the run's seed (a scheduler of the PCT "
                   "kind), so a seed replays its interleaving; event times and C8 are simulated; "
                   "the data plane's memory is as weak as a GPU's: relaxed stores land late and "
                   "out of order) | real (the steady clock; ranks run in parallel as the OS "
                   "schedules them). MPI and GPU runs always use real time. A file with `clock:` "
                   "runs only on that clock")
      ->check(CLI::IsMember({"real", "sim"}))
      ->capture_default_str();
  addEngineOption(*runCmd, args.engine);
  runCmd->add_option("--filter", args.suite.filter,
                     "Only scenarios whose name or path matches GLOB");
  args.seedOpt = runCmd->add_option("--seed", args.seed,
                                    "Seed for every scenario (default: each file's seed)");
  runCmd->add_option("--repeat", args.suite.repeat, "Run each scenario N times, seeds S, S+1, ...")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  runCmd->add_option("--junit", args.suite.junit, "Write a JUnit XML report to FILE");
  runCmd->add_option("--trace", args.suite.trace,
                     "Write a trace-event JSON timeline to FILE (Perfetto, chrome://tracing)");
  runCmd->add_option("--html", args.suite.html,
                     "Write one self-contained HTML report to FILE (summary, verdicts, reproduce "
                     "lines, a swimlane picture per run; no network needed to view it)");
  runCmd->add_option("--verdicts", args.suite.verdicts,
                     "Write each run's verdicts to FILE as JSON, for a program to compare: "
                     "file, seed, pass/fail, every property's pass | fail | n/a, coverage, the "
                     "data-plane steps run (and the file's own when a cap lowered them), and the "
                     "scenarios skipped with why (harness/driver/verdicts.h has the shape)");
  runCmd->add_flag("--progress", args.suite.progress, "Prefix each line with [i/n]");
  runCmd
      ->add_option("--nodes", args.suite.simulatedNodes,
                   "MPI: treat this box as K nodes of consecutive ranks (TP groups never span "
                   "nodes); default: nodes are real (shared memory)")
      ->check(CLI::Range(0, 1 << 20));
  runCmd
      ->add_option("--np", args.suite.np,
                   "MPI outside mpirun: how many ranks to start (default: the most any scenario "
                   "needs); more ranks run several scenarios at once")
      ->check(CLI::Range(0, 1 << 20));
  runCmd
      ->add_option("--ranks-per-gpu", args.suite.ranksPerGpu,
                   "gpu: N ranks of a node share each GPU (device = local rank mod "
                   "ceil(local ranks / N)); refused when that needs more GPUs than the node "
                   "shows. Default: round-robin over the visible GPUs (device = local rank mod "
                   "GPUs). A handle opens in another process on the same GPU; parallel TP groups "
                   "never share one in a round, so each device-memory check judges one group. "
                   "mock (threads or mpi): the same round-robin over mocked GPUs (threads: rank "
                   "mod ceil(ranks / N)); each rank keeps its own ledger and fault hooks; threads "
                   "judge a shared GPU's free memory once all its ranks have ended, each drop "
                   "charged to the rank holding it (mpi: each process's own figure). Default: a "
                   "mocked GPU a rank. A file's `ranks_per_gpu:` wins for that file (threads)")
      ->check(CLI::Range(1, 1 << 20));
  runCmd
      ->add_option("--kill-mode", args.suite.killMode,
                   "mpi: simulate (a dead or hung rank stops making calls) | signal (it is "
                   "SIGKILLed or SIGSTOPped for real; this process supervises mpirun, reports, "
                   "cleans up and restarts the rest of the list in a new mpirun)")
      ->check(CLI::IsMember({"simulate", "signal"}))
      ->capture_default_str();
  // Set by the signal-mode supervisor on the ranks it starts; not for users.
  runCmd->add_option("--run-dir", args.suite.runDir)->group("");
  runCmd->add_option("--first", args.suite.first)->group("");
  runCmd->add_flag("!--no-fork", args.suite.fork,
                   "threads: run every scenario in this process instead of a forked child (one "
                   "for scenario after scenario, replaced after a crash; to debug: a crashing "
                   "core then takes the whole run down)");
  runCmd->add_option(
      "--core", args.coreName,
      "Run every scenario that names no `core:` with this core in place of the "
      "production one: a planted core must make the suite fail (scenarios/README.md, "
      "\"Planted cores\"; the names are in `peerconf validate --help`)");
  runCmd->add_flag("!--no-coverage", args.suite.requireCoverage,
                   "Do not fail a run in which a certain fault (probability 1) of its scenario "
                   "never fired on a rank it names");
}

// The layouts a scenario's `dataplane: layout:` can name (built in, then registered),
// comma-separated.
std::string layoutNames() {
  std::string names;
  for (const auto& name : peerconf::layout::registeredLayoutNames()) {
    names += (names.empty() ? "" : ", ") + name;
  }
  return names;
}

struct ValidateArgs {
  std::vector<std::string> paths;
  std::string runtime = "mock";
  bool refused = false;
};

CLI::App* addValidateCommand(CLI::App& app, ValidateArgs& args,
                             const peerconf::harness::launch::CoreRegistry& cores) {
  auto* validateCmd = app.add_subcommand(
      "validate",
      "Parse and validate scenario files; print FILE:LINE:COL: message for each error, and\n"
      "FILE:LINE:COL: warning: ... for a fault the timeline makes unreachable (exit status 0).\n"
      "`core:` may name: " +
          coreNames(cores) + "\n`dataplane: layout:` may name: " + layoutNames());
  validateCmd->add_option("paths", args.paths, "Scenario files or directories")->required();
  validateCmd
      ->add_option("--runtime", args.runtime,
                   "mock | gpu: also reject what the GPU data plane cannot run (more ranks than "
                   "its kernels address, more late entries or history than they hold)")
      ->check(CLI::IsMember({"mock", "gpu"}))
      ->capture_default_str();
  validateCmd->add_flag(
      "--refused", args.refused,
      "The files must be REFUSED, each as its first line says: \"# expect-error: LINE:COL: "
      "fragment\" (at that line and column, a message containing the fragment). Exit 0 when "
      "every one was, 1 when one was accepted or refused otherwise, 2 for a file without that "
      "line. ci/suite.sh runs it on tests/data/invalid_scenarios/, so that a validation rule made "
      "blind fails the suite");
  return validateCmd;
}

struct ExploreArgs {
  peerconf::harness::explore::ExploreCommand command;
  std::uint64_t seed = 0;
  CLI::Option* seedOpt = nullptr;
  int lateMs = static_cast<int>(command.enumeration.lateDelay.count());
  int deadlineMs = static_cast<int>(command.enumeration.deadline.count());
  std::string clock = "sim";
  std::string engine = "fibers";
};

// `explore --systematic FILE` and its options.
void addSystematicOptions(CLI::App& exploreCmd, peerconf::harness::explore::SystematicOptions& o) {
  exploreCmd.add_option("--systematic", o.file,
                        "Enumerate this scenario file's interleavings (threads, simulated time)");
  exploreCmd
      .add_option("--preemptions", o.preemptions,
                  "--systematic: the preemption bound (below 2 exhausts nothing)")
      ->check(CLI::Range(0, 8))
      ->capture_default_str();
  exploreCmd
      .add_option("--older-reads", o.olderReads,
                  "--systematic: at most this many loads of an older value (or stores placed "
                  "before a newer one) an execution, the weak memory's choices")
      ->check(CLI::Range(0, 8))
      ->capture_default_str();
  exploreCmd
      .add_option("--max-executions", o.maxExecutions,
                  "--systematic: stop after this many executions (the bound is then reached, "
                  "the space not exhausted)")
      ->check(CLI::Range(1, 100000000))
      ->capture_default_str();
  exploreCmd.add_option("--schedule-out", o.scheduleOut,
                        "--systematic: where a failing execution's schedule is written "
                        "(default: the file's name + .schedule, here)");
  exploreCmd.add_option("--replay", o.replay,
                        "--systematic: run this schedule once and print its verdict");
}

// NOLINTNEXTLINE(readability-function-size): a flat list of the explore command's options
CLI::App* addExploreCommand(CLI::App& app, ExploreArgs& args) {
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
      "--systematic FILE: one small scenario's interleavings, depth first within --preemptions\n"
      "(switches away from a rank that could go on) and --older-reads (loads that read an older\n"
      "value: the weak memory's choices), each judged; says how many ran and whether\n"
      "the space was exhausted; a failing one's schedule is written for --replay. Each\n"
      "execution is held to the bounds by a recount of what it ran: one outside them stops the\n"
      "walk with SELF-CHECK FAILED (exit 1; the explorer is wrong, not the file).\n"
      "Under mpirun (`mpirun -np K peerconf explore ...`), each process explores its own seed\n"
      "(base + rank; failures in --out/rank-R) and rank 0 reports the total (search mode only).\n"
      "Exit status: 0 nothing found, 1 a failing case, a re-run that ended differently or the\n"
      "systematic walk's self-check, 2 usage error, 130 (143, 129) interrupted by Ctrl-C\n"
      "(SIGTERM, SIGHUP): the summary of the cases that ran, \"interrupted after N of M\n"
      "cases\"; a second one ends it at once.");
  exploreCmd
      ->add_option("--cases", args.command.search.cases, "Passing cases before the search stops")
      ->check(CLI::Range(1, 100000000))
      ->capture_default_str();
  args.seedOpt =
      exploreCmd->add_option("--seed", args.seed, "rapidcheck seed (default: random, printed)");
  exploreCmd
      ->add_option("--max-ranks", args.command.search.generator.maxRanks,
                   "Most ranks a scenario has")
      ->check(CLI::Range(1, 16))
      ->capture_default_str();
  exploreCmd->add_option("--out", args.command.search.outDir, "Directory for failing cases (YAML)")
      ->capture_default_str();
  exploreCmd
      ->add_option("--recheck-fraction", args.command.search.recheckFraction,
                   "Fraction of passing cases re-run to compare their event logs")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  exploreCmd->add_option("--reproduce", args.command.search.reproduce,
                         "Replay the failing case (and its shrinking) from the reproduce string "
                         "a failure printed; give the same --max-ranks");
  exploreCmd->add_flag("!--no-shrink", args.command.search.shrink,
                       "Report the first failing case as found, without shrinking it");
  exploreCmd->add_flag("--exhaustive", args.command.exhaustive,
                       "Enumerate every subset of open failures instead of searching");
  exploreCmd->add_option("--ranks", args.command.enumeration.ranks, "--exhaustive: ranks (1..4)")
      ->check(CLI::Range(1, 4))
      ->capture_default_str();
  exploreCmd->add_flag("--with-late", args.command.enumeration.withLate,
                       "--exhaustive: cross every subset with one late rank at each point "
                       "(1 + 5N times the cases, each at least --late-delay long)");
  exploreCmd->add_flag("--with-table", args.command.enumeration.withTable,
                       "--exhaustive: cross every subset with a device address table failure "
                       "(alloc-table, copy-table) on each rank and on every rank (up to 3 + 2N "
                       "times the cases; ranks whose opens fail never reach their table)");
  exploreCmd->add_option("--late-delay", args.lateMs, "--exhaustive --with-late: how late, in ms")
      ->check(CLI::Range(1, 600000))
      ->capture_default_str();
  exploreCmd
      ->add_option("--deadline", args.deadlineMs,
                   "--exhaustive: deadline of each group call, in ms")
      ->check(CLI::Range(1, 600000))
      ->capture_default_str();
  exploreCmd
      ->add_option("--clock", args.clock,
                   "sim | real: the cases' clock (sim, the default: simulated time, deadlines, "
                   "delays and hangs take no real time and each case's interleaving is drawn "
                   "from its seed; real: the steady clock, ranks in parallel)")
      ->check(CLI::IsMember({"real", "sim"}))
      ->capture_default_str();
  addEngineOption(*exploreCmd, args.engine);
  addSystematicOptions(*exploreCmd, args.command.systematic);
  exploreCmd->add_flag("--quiet", args.command.search.quiet, "Only the summary, no progress lines");
  exploreCmd->add_flag("--breakdown", args.command.search.breakdown,
                       "Random and exhaustive: the summary says where a case's wall time went, "
                       "in microseconds a case: setup (making the case, the run's state, the "
                       "scenario to the child), run (the ranks), checkers (the judgement), record "
                       "(the record made, the mocked runtime reset, the record back from the "
                       "child)");
  exploreCmd->add_flag("!--no-fork", args.command.search.isolate,
                       "Run the cases in this process instead of a forked child (one child for "
                       "case after case, replaced after a crash); to debug");
  return exploreCmd;
}

struct ExplainArgs {
  std::vector<std::string> paths;
  peerconf::harness::expectation::ExplainOptions options;
};

CLI::App* addExplainCommand(CLI::App& app, ExplainArgs& args) {
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
  explainCmd->add_option("paths", args.paths, "Scenario files or directories")->required();
  explainCmd->add_flag("--write-expect", args.options.writeExpect,
                       "Write the derived `expect:` section into each file that differs (or has "
                       "none): only that block's text changes, comments and key order stay; a "
                       "file that agrees is not rewritten");
  return explainCmd;
}

// `explore`: the options the search and the enumeration share are given once on the command line.
int runExplore(ExploreArgs& args, int* argc, char*** argv) {
  auto& explore = args.command;
  if (*args.seedOpt) explore.search.seed = args.seed;
  if (*args.seedOpt) explore.systematic.seed = args.seed;
  explore.systematic.quiet = explore.search.quiet;
  explore.enumeration.outDir = explore.search.outDir;
  explore.enumeration.quiet = explore.search.quiet;
  explore.enumeration.isolate = explore.search.isolate;
  explore.enumeration.breakdown = explore.search.breakdown;
  explore.search.clock = peerconf::harness::launch::clockModeFromString(args.clock);
  explore.enumeration.clock = explore.search.clock;
  explore.search.engine = peerconf::harness::launch::engineFromString(args.engine);
  explore.enumeration.engine = explore.search.engine;
  explore.systematic.engine = explore.search.engine;
  explore.enumeration.lateDelay = std::chrono::milliseconds(args.lateMs);
  explore.enumeration.deadline = std::chrono::milliseconds(args.deadlineMs);
  if (peerconf::harness::mpirun::underMpirun()) {
    return peerconf::harness::explore::runExploreUnderMpi(explore, argc, argv, std::cout,
                                                          std::cerr);
  }
  return peerconf::harness::explore::runExploreCommand(explore, std::cout, std::cerr);
}

// `run`: --core, --runtime, --clock and --seed into the suite's options, then the suite.
int runRun(RunArgs& args, int* argc, char*** argv) {
  using peerconf::harness::launch::Runtime;
  auto& run = args.suite;
  if (!args.coreName.empty()) {
    const peerconf::harness::model::CoreFactory* core = run.cores.find(args.coreName);
    if (core == nullptr) {
      std::cerr << "peerconf: --core: unknown core '" << args.coreName
                << "'; the cores are: " << coreNames(run.cores) << "\n";
      return 2;
    }
    run.core = *core;
    run.runner = run.cores.runner(args.coreName);
    run.plantedRuntime = run.cores.runtime(args.coreName);
    run.coreName = args.coreName;
  }
  run.runtime = args.runtime == "gpu" ? Runtime::kGpu : Runtime::kMock;
  run.clock = peerconf::harness::launch::clockModeFromString(args.clock);
  run.engine = peerconf::harness::launch::engineFromString(args.engine);
  if (*args.seedOpt) run.seed = args.seed;
  return peerconf::harness::driver::runSuite(run, argc, argv, std::cout, std::cerr);
}

}  // namespace

namespace peerconf::harness::driver {

int runCommandLine(int argc, char** argv,
                   const std::function<void(launch::CoreRegistry&)>& addCores) {
  using peerconf::harness::launch::Runtime;
  // Reproduce lines name the command that runs them: peerconf, or a team's own executable.
  if (argc > 0 && argv[0] != nullptr) model::setProgramName(argv[0]);
  CLI::App app{
      "peerconf: fault-injection and conformance harness for peer-memory handshakes (PeerBuffer,"
      " tpAgree).\nExit status: 0 all passed, 1 a scenario failed, 2 usage or input error, 130\n"
      "(143, 129) `run` or `explore` interrupted by Ctrl-C (SIGTERM, SIGHUP): it ends what it\n"
      "started, reports what ran and says \"interrupted after N of M\"; a second one ends it at "
      "once."};
  app.require_subcommand(1);

  RunArgs run;
  // The cores a scenario's `core:` can name: production and the caller's (the `peerconf`
  // command adds the planted ones of tests/planted/).
  if (addCores) addCores(run.suite.cores);
  addRunCommand(app, run);
  ValidateArgs validate;
  auto* validateCmd = addValidateCommand(app, validate, run.suite.cores);
  ExploreArgs explore;
  auto* exploreCmd = addExploreCommand(app, explore);
  ExplainArgs explain;
  auto* explainCmd = addExplainCommand(app, explain);

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

  if (*validateCmd && validate.refused) {
    return peerconf::harness::driver::checkRefusals(
        validate.paths, std::cout, std::cerr, run.suite.cores,
        validate.runtime == "gpu" ? Runtime::kGpu : Runtime::kMock);
  }
  if (*validateCmd) {
    return peerconf::harness::driver::validateFiles(
        validate.paths, std::cout, std::cerr, run.suite.cores,
        validate.runtime == "gpu" ? Runtime::kGpu : Runtime::kMock);
  }
  if (*explainCmd) {
    const auto& cores = run.suite.cores;
    explain.options.checkCore = [&cores](const auto& scenario) { cores.check(scenario); };
    return peerconf::harness::expectation::runExplain(explain.paths, explain.options, std::cout,
                                                      std::cerr);
  }
  // Ctrl-C, SIGTERM, SIGHUP: a run or an exploration ends like a finished one, minus the rest
  // (launch/interrupt.h). Ranks under mpirun hear of it from the process that started mpirun.
  if (!mpirun::underMpirun()) launch::catchInterrupts();
  try {
    if (*exploreCmd) return runExplore(explore, &argc, &argv);
    return runRun(run, &argc, &argv);
  } catch (const launch::Interrupted& stop) {
    // What ran the list caught it already where it had something to report.
    return launch::interruptedExitCode(stop.signal);
  }
}

}  // namespace peerconf::harness::driver

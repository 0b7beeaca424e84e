// peerconf: the command line. `run` drives scenario files through a launcher and reports;
// `validate` checks scenario files; `explore` searches fault spaces (see --help of each).
#include <CLI/CLI.hpp>
#include <iostream>

#include "suite.h"

int main(int argc, char** argv) {
  using peerconf::harness::Runtime;
  CLI::App app{
      "peerconf: fault-injection and conformance harness for peer-memory handshakes (PeerBuffer,"
      " tpAgree).\nExit status: 0 all passed, 1 a scenario failed, 2 usage or input error."};
  app.require_subcommand(1);

  peerconf::harness::SuiteOptions run;
  std::string runtime = "mock";
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
  runCmd->add_option("--filter", run.filter, "Only scenarios whose name or path matches GLOB");
  auto* seedOpt =
      runCmd->add_option("--seed", seed, "Seed for every scenario (default: each file's seed)");
  runCmd->add_option("--repeat", run.repeat, "Run each scenario N times, seeds S, S+1, ...")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  runCmd->add_option("--junit", run.junit, "Write a JUnit XML report to FILE");
  runCmd->add_option("--trace", run.trace,
                     "Write a trace-event JSON timeline to FILE (Perfetto, chrome://tracing)");
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
  runCmd->add_flag("!--no-coverage", run.requireCoverage,
                   "Do not fail when a fault site a scenario declares never fired");

  std::vector<std::string> validatePaths;
  auto* validateCmd = app.add_subcommand(
      "validate", "Parse and validate scenario files; print FILE:LINE:COL: message for each error");
  validateCmd->add_option("paths", validatePaths, "Scenario files or directories")->required();

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

  if (*validateCmd) return peerconf::harness::validateFiles(validatePaths, std::cout, std::cerr);
  run.runtime = runtime == "gpu" ? Runtime::kGpu : Runtime::kMock;
  if (*seedOpt) run.seed = seed;
  return peerconf::harness::runSuite(run, &argc, &argv, std::cout, std::cerr);
}

// `peerconf explain`: what a scenario must show, derived from its faults by the expectation
// oracle that the exploration uses (derive.h, the one home of the semantics), printed per
// rank and compared with what the file's `expect:` says; `--write-expect` writes the derived
// section into the file (scenarios/README.md, "The reviewer's loop").
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "model/scenario.h"

namespace peerconf::harness::expectation {

struct ExplainOptions {
  bool writeExpect = false;  // --write-expect: write the derived `expect:` section
  // Checks `core:` (the command's core registry: an unknown name throws a ScenarioError, an input
  // error); none: any name goes.
  std::function<void(const model::Scenario&)> checkCore;
};

enum class ExplainResult {
  kAgrees,      // every derived item agrees with the file (what is not derived is stated)
  kNotDerived,  // the oracle cannot derive the outcome (timing, too many chance faults, ...):
                // nothing was compared, and the report says why
  kDiffers,     // at least one difference, or no `expect:` at all
  kInvalid,     // the file does not parse or validate (exit 2)
};

struct FileExplanation {
  std::string file;
  ExplainResult result = ExplainResult::kInvalid;
  std::string report;                    // what explain prints for the file (stdout)
  std::string error;                     // kInvalid: "FILE:LINE:COL: message" (stderr)
  std::vector<std::string> differences;  // "FILE:LINE:COL: ..." each
  std::vector<std::string> notDerived;   // what the file states that explain does not derive
  int compared = 0;                      // items compared (outcome, reported, messages)
  // The last this many of `differences` are certain faults that never fire (a run fails its
  // coverage check); the others are the file's expect: against the derivation.
  std::size_t unfiredFaults = 0;
  std::string derivedExpect;  // the `expect:` section --write-expect writes (when it differs)
  bool written = false;       // --write-expect rewrote the file
};

// Explains one scenario given as text (`file` labels it). Never writes: with
// options.writeExpect, `derivedExpect` is verified as explainFile would write it. A text without
// `expect:` (a reviewer's draft: faults only) is explained too; it differs (nothing to compare).
FileExplanation explainText(const std::string& text, const std::string& file,
                            const ExplainOptions& options = {});

// Explains one file; with options.writeExpect, a file that differs gets the derived `expect:`
// section (only that text span changes: comments and key order stay; a file without one gets it
// appended). A file that agrees is not touched (its mtime stays).
FileExplanation explainFile(const std::string& path, const ExplainOptions& options = {});

// `text` with its top-level `expect:` block (found by yaml-cpp's marks, up to the last line of
// its value) replaced by `block`, or `block` appended when there is none. Throws
// std::invalid_argument when the block cannot be located (e.g. a flow mapping at the top).
std::string spliceExpect(const std::string& text, const std::string& block);

// `peerconf explain PATHS [--write-expect]`: every file (directories searched as `run` does),
// one report each, then a summary. Exit status: 0 every file agrees (or is not derived, said so),
// 1 a difference, 2 an input error.
int runExplain(const std::vector<std::string>& paths, const ExplainOptions& options,
               std::ostream& out, std::ostream& err);

}  // namespace peerconf::harness::expectation

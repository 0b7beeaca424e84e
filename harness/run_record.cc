// RunRecord helpers: status names and the reproduce command.
#include "run_record.h"

namespace peerconf::harness {

std::string toString(RankStatus status) {
  switch (status) {
    case RankStatus::kOk:
      return "ok";
    case RankStatus::kRaised:
      return "raised";
    case RankStatus::kDead:
      return "dead";
    case RankStatus::kHung:
      return "hung";
    case RankStatus::kMissing:
      return "missing";
  }
  return "unknown";
}

std::string reproduceCommand(const RunRecord& record) {
  std::string cmd = "peerconf run " + record.scenario.file + " --seed " +
                    std::to_string(record.seed) + " --launcher " + record.launcher;
  if (record.runtime != "mock") cmd += " --runtime " + record.runtime;
  return cmd;
}

}  // namespace peerconf::harness

// The registry of checkers and the loop that runs them.
#include "checkers.h"

#include <algorithm>
#include <exception>
#include <mutex>

#include "support.h"

namespace peerconf::harness::checkers {

namespace {

std::mutex& registryMutex() {
  static std::mutex mutex;
  return mutex;
}

std::vector<Checker>& registry() {
  static std::vector<Checker> checkers;
  return checkers;
}

}  // namespace

std::vector<Checker> builtinCheckers() {
  // C6 and C7 belong to the data plane: they arrive through registerChecker.
  return {
      {Property::kC1Uniform, checkUniformOutcome}, {Property::kC2Message, checkMessages},
      {Property::kC3Cleanup, checkCleanup},        {Property::kC4Addresses, checkAddresses},
      {Property::kC5Agreement, checkAgreement},    {Property::kC8Bounded, checkBounded},
  };
}

void registerChecker(Checker checker) {
  std::lock_guard lock(registryMutex());
  auto& checkers = registry();
  auto same = std::find_if(checkers.begin(), checkers.end(),
                           [&](const Checker& c) { return c.property == checker.property; });
  if (same != checkers.end()) {
    *same = std::move(checker);
  } else {
    checkers.push_back(std::move(checker));
  }
}

std::vector<Checker> registeredCheckers() {
  std::vector<Checker> all = builtinCheckers();
  {
    std::lock_guard lock(registryMutex());
    for (const Checker& extra : registry()) {
      auto same = std::find_if(all.begin(), all.end(),
                               [&](const Checker& c) { return c.property == extra.property; });
      if (same != all.end()) {
        *same = extra;
      } else {
        all.push_back(extra);
      }
    }
  }
  std::stable_sort(all.begin(), all.end(), [](const Checker& a, const Checker& b) {
    return static_cast<int>(a.property) < static_cast<int>(b.property);
  });
  return all;
}

std::vector<Verdict> checkRun(const RunRecord& record) {
  return checkRun(record, registeredCheckers());
}

std::vector<Verdict> checkRun(const RunRecord& record, const std::vector<Checker>& checkers) {
  std::vector<Verdict> verdicts;
  verdicts.reserve(checkers.size());
  for (const Checker& checker : checkers) {
    try {
      verdicts.push_back(checker.check(record));
    } catch (const std::exception& e) {
      Verdict broken = startVerdict(checker.property, record);
      broken.status = Verdict::Status::kFail;
      broken.expectedViolation = false;  // a crashed checker never satisfies a control
      broken.summary = std::string("the checker itself threw: ") + e.what();
      verdicts.push_back(std::move(broken));
    }
  }
  return verdicts;
}

}  // namespace peerconf::harness::checkers

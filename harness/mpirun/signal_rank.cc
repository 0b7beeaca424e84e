// Real-signal mode, the worker side: event streams, results, real SIGKILL and SIGSTOP.
#include "mpirun/signal_rank.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "model/record_json.h"
#include "mpirun/run_dir.h"

namespace peerconf::harness::mpirun {

using model::dumpJson;
using model::Event;
using model::EventLog;
using model::Point;
using model::toString;

using mpirun::itemName;
using nlohmann::json;

SignalRank::SignalRank(std::string runDir, std::size_t index, int rank,
                       EventLog::Clock::time_point start)
    : runDir_(std::move(runDir)), index_(index), rank_(rank) {
  const std::string path = runDir_ + "/" + itemName(index_, rank_, "events");
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
  if (fd_ < 0) throw std::runtime_error("cannot create " + path + ": " + std::strerror(errno));
  writeLine(
      json{{"header", {{"rank", rank_}, {"pid", ::getpid()}, {"startNs", mpirun::steadyNs(start)}}}}
          .dump());
}

SignalRank::~SignalRank() {
  if (fd_ >= 0) ::close(fd_);
}

void SignalRank::writeLine(const std::string& line) noexcept {
  (void)mpirun::writeAll(fd_, line + "\n");
}

void SignalRank::attach(EventLog& log) {
  log.setSink([this](const Event& event) { writeLine(dumpJson(json{{"event", toJson(event)}})); });
}

void SignalRank::die(Point at) {
  writeLine(json{{"stop", {{"status", "dead"}, {"at", toString(at)}}}}.dump());
  ::raise(SIGKILL);
  for (;;) ::pause();  // not reached
}

void SignalRank::exit(Point at, int code) {
  writeLine(json{{"stop", {{"status", "exited"}, {"at", toString(at)}, {"code", code}}}}.dump());
  ::_exit(code);
}

void SignalRank::hang(Point at) {
  writeLine(json{{"stop", {{"status", "hung"}, {"at", toString(at)}}}}.dump());
  ::raise(SIGSTOP);
  writeLine(json{{"continued", toString(at)}}.dump());
}

void SignalRank::writeResult(const std::string& text) {
  mpirun::writeFileAtomically(runDir_ + "/" + itemName(index_, rank_, "result"), text);
}

void announceSignalRank(const std::string& runDir, int rank) {
  static std::once_flag once;
  std::call_once(once, [&] {
    mpirun::writeFileAtomically(runDir + "/pid." + std::to_string(rank),
                                std::to_string(::getpid()));
  });
}

void awaitSupervisor() {
  for (;;) ::pause();
}

}  // namespace peerconf::harness::mpirun

// Process watching through /proc and waitpid (process_watch.h).
#include "mpirun/process_watch.h"

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "mpirun/run_dir.h"

namespace peerconf::harness::mpirun {

char processState(pid_t pid) {
  const auto stat = mpirun::readFile("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return 0;
  const auto close = stat->rfind(')');
  if (close == std::string::npos || close + 2 >= stat->size()) return 0;
  return (*stat)[close + 2];
}

pid_t parentOf(pid_t pid) {
  const auto stat = mpirun::readFile("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return -1;
  const auto close = stat->rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(stat->substr(close + 2));
  char state = 0;
  pid_t parent = -1;
  rest >> state >> parent;
  return parent;
}

std::vector<pid_t> children() {
  std::vector<pid_t> out;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return out;
  const pid_t self = ::getpid();
  while (const dirent* entry = ::readdir(dir)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || pid <= 0) continue;
    if (parentOf(static_cast<pid_t>(pid)) == self) out.push_back(static_cast<pid_t>(pid));
  }
  ::closedir(dir);
  return out;
}

bool alive(pid_t pid) {
  if (pid <= 0) return false;
  if (::kill(pid, 0) != 0 && errno == ESRCH) return false;
  const char state = processState(pid);
  return state != 0 && state != 'Z' && state != 'X';
}

void reap(pid_t mpirun, bool& exited, int& status) {
  for (;;) {
    int st = 0;
    const pid_t pid = ::waitpid(-1, &st, WNOHANG);
    if (pid <= 0) return;
    if (pid == mpirun) {
      exited = true;
      status = st;
    }
  }
}

std::string describeStatus(int status) {
  if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

bool signalCarriedOut(bool dead, char state) {
  return dead ? (state == 0 || state == 'Z' || state == 'X') : state == 'T';
}

char awaitSignal(pid_t pid, bool dead) {
  char state = processState(pid);
  for (int poll = 0; !signalCarriedOut(dead, state) && poll < 200; ++poll) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    state = processState(pid);
  }
  return state;
}

}  // namespace peerconf::harness::mpirun

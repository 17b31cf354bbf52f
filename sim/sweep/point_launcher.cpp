#include "sim/sweep/point_launcher.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace lockstep {
namespace {

// `lockstep run`'s exit code when a signal stopped it (sim/cli/commands.hpp).
constexpr int kInterruptedExit = 130;

// What a failed run said: its last lines (its error messages come last), within reason.
std::string tail_of(const std::filesystem::path& log) {
  constexpr std::size_t kLongestMessage = 2000;
  std::ifstream in(log);
  std::ostringstream text;
  text << in.rdbuf();
  std::string all = text.str();
  while (!all.empty() && (all.back() == '\n' || all.back() == ' ')) all.pop_back();
  if (all.size() <= kLongestMessage) return all;
  const std::size_t cut = all.find('\n', all.size() - kLongestMessage);
  return all.substr(cut == std::string::npos ? all.size() - kLongestMessage : cut + 1);
}

std::string exit_description(int status) {
  if (WIFSIGNALED(status)) {
    const char* name = strsignal(WTERMSIG(status));
    return "killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
           (name != nullptr ? name : "?") + ")";
  }
  return "exit code " + std::to_string(WEXITSTATUS(status));
}

}  // namespace

PointLauncher::PointLauncher(const SweepPlan& plan, const SweepDirectory& directory)
    : plan_(plan),
      directory_(directory),
      program_(std::filesystem::read_symlink("/proc/self/exe")) {}

void PointLauncher::start(const SweepPoint& point) {
  std::vector<std::string> arguments = {program_.string(), "run", plan_.base.string()};
  for (const SweepSetting& setting : point.settings) {
    arguments.emplace_back("--set");
    arguments.push_back(setting.key + "=" + setting.value);
  }
  if (point.seed) {
    arguments.emplace_back("--seed");
    arguments.push_back(std::to_string(*point.seed));
  }
  arguments.insert(arguments.end(), {"-o", directory_.point_file(point.index).string(), "--quiet"});
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);

  // Opened before the fork: between fork and exec the child may only make system calls.
  const int log = open(directory_.log_file(point.index).c_str(),
                       O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log < 0) {
    throw std::runtime_error("cannot write " + directory_.log_file(point.index).string() + ": " +
                             std::strerror(errno));
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent) _exit(127);
    const int null_input = open("/dev/null", O_RDONLY);
    if (null_input < 0 || dup2(null_input, STDIN_FILENO) < 0 || dup2(log, STDOUT_FILENO) < 0 ||
        dup2(log, STDERR_FILENO) < 0)
      _exit(127);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(log);
  if (pid < 0) throw std::runtime_error(std::string("cannot start a point: ") + strerror(errno));
  children_.emplace(pid, Child{point.index, std::chrono::steady_clock::now()});
}

std::optional<FinishedPoint> PointLauncher::collect(bool block) {
  while (!children_.empty()) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, block ? 0 : WNOHANG);
    if (pid == 0) return std::nullopt;
    if (pid < 0) {
      if (errno == EINTR) return std::nullopt;  // a signal: let the caller look at it
      throw std::runtime_error(std::string("waiting for a point: ") + std::strerror(errno));
    }
    if (children_.contains(pid)) return finish(pid, status);
  }
  return std::nullopt;
}

FinishedPoint PointLauncher::finish(pid_t pid, int status) {
  const Child child = children_.at(pid);
  children_.erase(pid);
  FinishedPoint finished;
  finished.index = child.index;
  finished.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - child.started).count();
  finished.succeeded = WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
                       std::filesystem::exists(directory_.point_file(child.index));
  std::error_code ignored;
  // A run stopped by Ctrl-C or SIGTERM did not fail: the point stays to do.
  finished.interrupted = WIFEXITED(status) && WEXITSTATUS(status) == kInterruptedExit;
  if (finished.succeeded || finished.interrupted) {
    std::filesystem::remove(directory_.failure_file(child.index), ignored);
    return finished;
  }
  finished.message = exit_description(status);
  const std::string said = tail_of(directory_.log_file(child.index));
  if (!said.empty()) finished.message += ": " + said;
  write_file_atomically(directory_.failure_file(child.index), finished.message + "\n");
  return finished;
}

void PointLauncher::stop_all() {
  for (const auto& [pid, child] : children_) kill(pid, SIGTERM);
  while (!children_.empty()) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0 && errno != EINTR) break;
    if (pid > 0) children_.erase(pid);
  }
}

}  // namespace lockstep

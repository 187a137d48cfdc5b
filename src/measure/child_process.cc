#include "measure/child_process.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>

extern char** environ;

namespace cloudfit {

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void SleepMs(int ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

// The environment for the child, built before fork: after fork only async-signal-safe calls
// are allowed, which setenv is not.
std::vector<std::string> ChildEnvironment(
    const std::vector<std::pair<std::string, std::string>>& additions) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string entry(*e);
    std::string name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& [k, v] : additions) replaced = replaced || k == name;
    if (!replaced) env.push_back(std::move(entry));
  }
  for (const auto& [k, v] : additions) env.push_back(k + "=" + v);
  return env;
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Whether we may hand the terminal to a child: stdin is a terminal whose foreground group is
// ours (not when we run in the background, in a pipeline's middle or under a test runner).
bool OwnsForegroundTerminal() {
  if (!isatty(STDIN_FILENO)) return false;
  return tcgetpgrp(STDIN_FILENO) == getpgrp();
}

// tcsetpgrp from a process that is (or is about to be) in the background raises SIGTTOU.
void SetForeground(pid_t group) {
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGTTOU);
  sigprocmask(SIG_BLOCK, &block, &old);
  tcsetpgrp(STDIN_FILENO, group);
  sigprocmask(SIG_SETMASK, &old, nullptr);
}

std::atomic<int> pending_signal{0};
std::atomic<int> catchers_alive{0};

void RecordSignal(int signal) { pending_signal.store(signal); }

constexpr int kCaughtSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction previous_actions[3];

}  // namespace

Status ChildProcess::Start(ChildOptions options, std::unique_ptr<ChildProcess>* out) {
  if (options.argv.empty() || options.argv[0].empty()) {
    return Status::InvalidArgument("no command to run");
  }
  std::vector<std::string> argv_strings = options.argv;
  if (argv_strings.size() == 1 && argv_strings[0].find_first_of(" \t") != std::string::npos) {
    argv_strings = {"/bin/sh", "-c", options.argv[0]};
  }
  std::vector<char*> argv = CStrings(argv_strings);
  std::vector<std::string> env_strings = ChildEnvironment(options.env);
  std::vector<char*> envp = CStrings(env_strings);
  bool capture = static_cast<bool>(options.on_line);
  bool foreground = options.foreground_terminal && OwnsForegroundTerminal();

  // exec failures come back through a close-on-exec pipe: no bytes means exec succeeded.
  int status_pipe[2];
  if (pipe2(status_pipe, O_CLOEXEC) != 0) {
    return Status::IOError(std::string("pipe: ") + strerror(errno));
  }
  int output_pipe[2] = {-1, -1};
  if (capture && pipe2(output_pipe, O_CLOEXEC) != 0) {
    int err = errno;
    close(status_pipe[0]);
    close(status_pipe[1]);
    return Status::IOError(std::string("pipe: ") + strerror(err));
  }

  pid_t pid = fork();
  if (pid < 0) {
    int err = errno;
    close(status_pipe[0]);
    close(status_pipe[1]);
    if (capture) {
      close(output_pipe[0]);
      close(output_pipe[1]);
    }
    return Status::IOError(std::string("fork: ") + strerror(err));
  }
  if (pid == 0) {
    // The child: only async-signal-safe calls from here to exec.
    setpgid(0, 0);
    if (foreground) {
      signal(SIGTTOU, SIG_IGN);
      tcsetpgrp(STDIN_FILENO, getpid());
    }
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGTTOU, SIGPIPE}) signal(s, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (options.null_stdin) {
      int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    }
    if (capture) {
      dup2(output_pipe[1], STDOUT_FILENO);
      if (options.merge_stderr) dup2(output_pipe[1], STDERR_FILENO);
    }
    execvpe(argv[0], argv.data(), envp.data());
    int err = errno;
    ssize_t ignored = write(status_pipe[1], &err, sizeof err);
    (void)ignored;
    _exit(127);
  }

  // The parent sets the group too, so it exists before either side relies on it.
  setpgid(pid, pid);
  if (foreground) SetForeground(pid);
  close(status_pipe[1]);
  if (capture) close(output_pipe[1]);

  std::unique_ptr<ChildProcess> child(new ChildProcess());
  child->pid_ = pid;
  child->owns_terminal_ = foreground;
  if (capture) {
    child->output_fd_ = output_pipe[0];
    fcntl(child->output_fd_, F_SETFL, fcntl(child->output_fd_, F_GETFL) | O_NONBLOCK);
    child->on_line_ = std::move(options.on_line);
  }

  int exec_errno = 0;
  ssize_t n;
  do {
    n = read(status_pipe[0], &exec_errno, sizeof exec_errno);
  } while (n < 0 && errno == EINTR);
  close(status_pipe[0]);
  if (n > 0) {
    child->Wait(-1);
    child->Reap();
    return Status::InvalidArgument("cannot run '" + options.argv[0] + "': " + strerror(exec_errno));
  }
  *out = std::move(child);
  return Status::OK();
}

ChildProcess::~ChildProcess() {
  if (!reaped_) {
    if (!exited()) {
      SignalGroup(SIGKILL);
      Wait(-1);
    }
    Reap();
  }
  CloseOutput();
}

bool ChildProcess::Wait(double timeout_seconds) {
  Clock::time_point start = Clock::now();
  while (!exited()) {
    siginfo_t info;
    memset(&info, 0, sizeof info);
    // WNOWAIT leaves the child a zombie: its pid, group and /proc entry stay valid.
    int rc = waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT);
    if (rc == 0 && info.si_pid == pid_) {
      if (info.si_code == CLD_EXITED) {
        exit_code_ = info.si_status;
      } else {
        term_signal_ = info.si_status;
        exit_code_ = 128 + info.si_status;
      }
      RestoreTerminal();
      break;
    }
    if (rc != 0 && errno != EINTR) {
      // Nothing to wait for (reaped elsewhere); report a failure rather than spin.
      exit_code_ = 255;
      break;
    }
    if (owns_terminal_) FollowTerminalStop();
    int slice_ms = 20;
    if (timeout_seconds >= 0) {
      double left = timeout_seconds - SecondsSince(start);
      if (left <= 0) return false;
      slice_ms = std::max(1, std::min(slice_ms, static_cast<int>(left * 1000)));
    }
    if (output_fd_ >= 0) {
      ReadOutput(slice_ms);
    } else {
      SleepMs(slice_ms);
    }
  }
  // The child is gone; take what it left in the pipe. Descendants may still hold the pipe
  // open, so read only what is there now.
  if (output_fd_ >= 0) {
    ReadOutput(0);
    DeliverLines(true);
  }
  return true;
}

void ChildProcess::ReadOutput(int timeout_ms) {
  struct pollfd p = {output_fd_, POLLIN, 0};
  int ready = poll(&p, 1, timeout_ms);
  if (ready <= 0) return;
  char buffer[4096];
  for (;;) {
    ssize_t n = read(output_fd_, buffer, sizeof buffer);
    if (n > 0) {
      partial_.append(buffer, static_cast<size_t>(n));
      if (partial_.size() >= kMaxChildLineBytes) DeliverLines(false);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) {
      // Every writer closed the pipe; keep the fd out of poll from now on.
      DeliverLines(true);
      CloseOutput();
      // Without output to wait on, the caller's loop sleeps instead.
      return;
    }
    break;  // EAGAIN: nothing more for now
  }
  DeliverLines(false);
}

void ChildProcess::DeliverLines(bool flush_partial) {
  size_t begin = 0;
  for (;;) {
    size_t end = partial_.find_first_of("\r\n", begin);
    if (end == std::string::npos) break;
    if (end > begin && on_line_) on_line_(partial_.substr(begin, end - begin));
    begin = end + 1;
  }
  partial_.erase(0, begin);
  if ((flush_partial && !partial_.empty()) || partial_.size() >= kMaxChildLineBytes) {
    if (on_line_) on_line_(partial_);
    partial_.clear();
  }
}

void ChildProcess::CloseOutput() {
  if (output_fd_ >= 0) close(output_fd_);
  output_fd_ = -1;
}

void ChildProcess::FollowTerminalStop() {
  siginfo_t info;
  memset(&info, 0, sizeof info);
  if (waitid(P_PID, static_cast<id_t>(pid_), &info, WSTOPPED | WNOHANG) != 0 ||
      info.si_pid != pid_) {
    return;
  }
  // Ctrl-Z stopped the command's group, which holds the terminal; the shell waits on us, so
  // we stop too and give the terminal back, or the terminal would hang. When the shell
  // continues us in the foreground (fg) the command gets the terminal again; in the
  // background (bg) it stays in the background with us.
  SetForeground(getpgrp());
  raise(SIGSTOP);
  if (OwnsForegroundTerminal()) {
    SetForeground(pid_);
  } else {
    owns_terminal_ = false;
  }
  kill(-pid_, SIGCONT);
}

void ChildProcess::RestoreTerminal() {
  if (!owns_terminal_) return;
  owns_terminal_ = false;
  SetForeground(getpgrp());
}

void ChildProcess::Reap() {
  if (reaped_ || pid_ <= 0) return;
  if (!exited()) Wait(-1);
  int status;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  RestoreTerminal();
}

void ChildProcess::SignalGroup(int signal) {
  if (reaped_ || pid_ <= 0) return;
  kill(-pid_, signal);
}

void ChildProcess::Stop(double grace_seconds) {
  if (!exited()) {
    SignalGroup(SIGTERM);
    if (!Wait(grace_seconds)) SignalGroup(SIGKILL);
    Wait(-1);
  }
  // Descendants that outlived the leader would keep GPUs busy for the next run.
  SignalGroup(SIGKILL);
}

SignalCatcher::SignalCatcher() {
  if (catchers_alive.fetch_add(1) == 0) {
    pending_signal.store(0);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = RecordSignal;
    sigemptyset(&action.sa_mask);
    for (int i = 0; i < 3; ++i) sigaction(kCaughtSignals[i], &action, &previous_actions[i]);
  }
}

SignalCatcher::~SignalCatcher() {
  if (catchers_alive.fetch_sub(1) == 1) {
    for (int i = 0; i < 3; ++i) sigaction(kCaughtSignals[i], &previous_actions[i], nullptr);
  }
}

int SignalCatcher::TakePending() {
  if (catchers_alive.load() == 0) return 0;
  return pending_signal.exchange(0);
}

}  // namespace cloudfit

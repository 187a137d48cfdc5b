// Running another program the way `cloudfit monitor` and `cloudfit poc` need it: in a process
// group of its own (so the whole tree it starts can be signalled at once, as a preempted node
// would be killed), with extra environment variables, optionally with its output read line by
// line, and waited for with a timeout.
#ifndef CLOUDFIT_MEASURE_CHILD_PROCESS_H_
#define CLOUDFIT_MEASURE_CHILD_PROCESS_H_

#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cloudfit/status.h"

namespace cloudfit {

// The longest piece of a child's output delivered as one line (1 MiB).
inline constexpr size_t kMaxChildLineBytes = size_t{1} << 20;

struct ChildOptions {
  // argv[0] is looked up in $PATH as a shell would. A command given as a single argument
  // holding a space ("torchrun --nproc_per_node=2 train.py", as users quote whole command
  // lines) runs through /bin/sh -c.
  std::vector<std::string> argv;
  // Set in the child's environment on top of ours (replacing variables of the same name).
  std::vector<std::pair<std::string, std::string>> env;
  // With a callback, the child's stdout (and its stderr too when `merge_stderr`) goes through a
  // pipe and each line reaches `on_line` without its terminator. '\r' ends a line as well, as
  // progress bars (tqdm) redraw with it. A line longer than kMaxChildLineBytes arrives in
  // pieces of about that size, so a child that never ends a line cannot fill our memory.
  // Without a callback, the child shares our stdin/out/err.
  std::function<void(const std::string& line)> on_line;
  bool merge_stderr = false;
  // Reads /dev/null instead of our stdin: a run in a background process group that read the
  // terminal would be stopped (SIGTTIN) and hang.
  bool null_stdin = false;
  // Makes the child's process group the terminal's foreground group while it runs, when our
  // stdin is a terminal and we are in the foreground: the child can then read the terminal and
  // receives Ctrl-C itself, as under a shell.
  bool foreground_terminal = false;
};

class ChildProcess {
 public:
  // Starts the child as the leader of a new process group. Fails when the program cannot be
  // found or executed (the message names it).
  static Status Start(ChildOptions options, std::unique_ptr<ChildProcess>* out);

  // Kills the group (SIGKILL) if the child still runs, and reaps it.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }

  // Waits until the child exits or `timeout_seconds` pass (negative: no limit), delivering
  // output lines meanwhile. True once it has exited. The exited child stays a zombie until
  // Reap() or destruction, so its /proc entry and its group id stay valid for a last sample.
  bool Wait(double timeout_seconds);
  bool exited() const { return exit_code_.has_value(); }
  // As a shell reports it: the exit status, or 128 + the signal that ended the child.
  // Only meaningful once exited().
  int exit_code() const { return exit_code_.value_or(-1); }
  // The signal that ended the child, or 0 when it exited by itself.
  int term_signal() const { return term_signal_; }
  void Reap();

  // Sends `signal` to the child's whole process group (nothing once it has been reaped).
  void SignalGroup(int signal);
  // SIGTERM to the group, then SIGKILL when the child has not exited after `grace_seconds`.
  void Stop(double grace_seconds);

 private:
  ChildProcess() = default;
  void ReadOutput(int timeout_ms);
  void DeliverLines(bool flush_partial);
  void CloseOutput();
  void RestoreTerminal();
  void FollowTerminalStop();

  pid_t pid_ = -1;
  bool reaped_ = false;
  std::optional<int> exit_code_;
  int term_signal_ = 0;
  int output_fd_ = -1;
  std::string partial_;
  std::function<void(const std::string&)> on_line_;
  bool owns_terminal_ = false;
};

// Catches SIGINT, SIGTERM and SIGHUP while alive (restoring the previous handlers after), so a
// command can forward them to its child and still write its files. A handler can only record
// the signal; the loops that wait on children poll TakePending().
class SignalCatcher {
 public:
  SignalCatcher();
  ~SignalCatcher();
  SignalCatcher(const SignalCatcher&) = delete;
  SignalCatcher& operator=(const SignalCatcher&) = delete;
  // The last signal caught since the previous call, or 0. Always 0 with no catcher alive.
  static int TakePending();
};

}  // namespace cloudfit

#endif  // CLOUDFIT_MEASURE_CHILD_PROCESS_H_

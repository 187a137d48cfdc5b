// What Linux's /proc says about a process tree (a pid and all its descendants) and the
// machine: CPU time, resident memory, disk I/O and system memory, as rates over the time
// between two samples.
#ifndef CLOUDFIT_MEASURE_PROC_SAMPLER_H_
#define CLOUDFIT_MEASURE_PROC_SAMPLER_H_

#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <utility>

namespace cloudfit {

struct ProcSample {
  bool root_alive = false;     // the root pid exists and is not a zombie
  int processes = 0;           // the root and its live descendants
  // CPU time of the tree over the period, in percent of one core (400 = four cores busy).
  double cpu_percent = 0;
  double rss_bytes = 0;
  double system_memory_used_bytes = 0;   // MemTotal - MemAvailable
  double system_memory_total_bytes = 0;
  // Storage bytes (/proc/PID/io read_bytes, write_bytes); nullopt when the root's io file is
  // unreadable (another user's process, or a kernel without task I/O accounting).
  std::optional<double> read_bytes_per_s;
  std::optional<double> write_bytes_per_s;
};

class ProcSampler {
 public:
  // The first Sample() measures from now. `proc` is the procfs mount, for tests.
  explicit ProcSampler(pid_t root, std::string proc = "/proc");

  ProcSample Sample();
  pid_t root() const { return root_; }

  // Processors this process may run on: the ceiling of the tree's cpu_percent / 100.
  static int OnlineCpus();

 private:
  // Counters of one process at the previous sample, keyed by pid and start time (pids recycle).
  struct Counters {
    double cpu_ticks = 0;
    std::optional<double> read_bytes;
    std::optional<double> write_bytes;
  };
  using Key = std::pair<pid_t, unsigned long long>;

  void Collect(std::map<Key, Counters>* now, ProcSample* sample, bool* io_readable) const;

  pid_t root_;
  std::string proc_;
  double ticks_per_second_;
  double page_bytes_;
  std::chrono::steady_clock::time_point last_time_;
  std::map<Key, Counters> last_;
};

}  // namespace cloudfit

#endif  // CLOUDFIT_MEASURE_PROC_SAMPLER_H_

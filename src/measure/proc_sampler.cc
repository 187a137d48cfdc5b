#include "measure/proc_sampler.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace cloudfit {

namespace {

struct StatLine {
  pid_t pid = 0;
  pid_t ppid = 0;
  char state = '?';
  double cpu_ticks = 0;  // utime + stime
  unsigned long long start_time = 0;
  double rss_pages = 0;
};

bool ReadWhole(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return !in.bad();
}

// /proc/PID/stat: "pid (comm) state ppid ...". The command name may hold spaces and
// parentheses, so the fields are counted from the last ')'.
bool ParseStat(const std::string& text, StatLine* out) {
  size_t close = text.rfind(')');
  if (close == std::string::npos) return false;
  out->pid = static_cast<pid_t>(std::atol(text.c_str()));
  std::istringstream fields(text.substr(close + 1));
  std::vector<std::string> f;  // f[0] is field 3 (state)
  std::string field;
  while (fields >> field) f.push_back(field);
  if (f.size() < 22) return false;
  out->state = f[0].empty() ? '?' : f[0][0];
  out->ppid = static_cast<pid_t>(std::atol(f[1].c_str()));
  out->cpu_ticks = std::strtod(f[11].c_str(), nullptr) + std::strtod(f[12].c_str(), nullptr);
  out->start_time = std::strtoull(f[19].c_str(), nullptr, 10);
  out->rss_pages = std::strtod(f[21].c_str(), nullptr);
  return true;
}

// read_bytes and write_bytes from /proc/PID/io, which only the owner (or root) may read.
bool ReadIo(const std::string& path, double* read_bytes, double* write_bytes) {
  std::string text;
  if (!ReadWhole(path, &text) || text.empty()) return false;
  std::istringstream lines(text);
  std::string key;
  double value;
  bool got_read = false, got_write = false;
  while (lines >> key >> value) {
    if (key == "read_bytes:") {
      *read_bytes = value;
      got_read = true;
    } else if (key == "write_bytes:") {
      *write_bytes = value;
      got_write = true;
    }
  }
  return got_read && got_write;
}

}  // namespace

ProcSampler::ProcSampler(pid_t root, std::string proc)
    : root_(root), proc_(std::move(proc)) {
  long ticks = sysconf(_SC_CLK_TCK);
  ticks_per_second_ = ticks > 0 ? static_cast<double>(ticks) : 100.0;
  long page = sysconf(_SC_PAGESIZE);
  page_bytes_ = page > 0 ? static_cast<double>(page) : 4096.0;
  ProcSample ignored;
  bool io = false;
  Collect(&last_, &ignored, &io);
  last_time_ = std::chrono::steady_clock::now();
}

int ProcSampler::OnlineCpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

void ProcSampler::Collect(std::map<Key, Counters>* now, ProcSample* sample,
                          bool* io_readable) const {
  // One pass over /proc for every process's parent, then the tree from the root down.
  std::map<pid_t, StatLine> stats;
  std::map<pid_t, std::vector<pid_t>> children;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(proc_, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string text;
    StatLine line;
    // A process can end between the listing and the read; it is simply not counted.
    if (!ReadWhole(entry.path().string() + "/stat", &text) || !ParseStat(text, &line)) continue;
    stats[line.pid] = line;
    children[line.ppid].push_back(line.pid);
  }

  *io_readable = false;
  std::deque<pid_t> queue;
  if (stats.count(root_)) queue.push_back(root_);
  while (!queue.empty()) {
    pid_t pid = queue.front();
    queue.pop_front();
    const StatLine& s = stats[pid];
    if (pid == root_) sample->root_alive = s.state != 'Z' && s.state != 'X';
    Counters c;
    c.cpu_ticks = s.cpu_ticks;
    double r = 0, w = 0;
    if (ReadIo(proc_ + "/" + std::to_string(pid) + "/io", &r, &w)) {
      c.read_bytes = r;
      c.write_bytes = w;
      if (pid == root_) *io_readable = true;
    }
    (*now)[{pid, s.start_time}] = c;
    if (s.state != 'Z' && s.state != 'X') {
      ++sample->processes;
      sample->rss_bytes += s.rss_pages * page_bytes_;
    }
    auto it = children.find(pid);
    if (it == children.end()) continue;
    for (pid_t child : it->second) {
      if (child != root_) queue.push_back(child);
    }
  }

  std::string meminfo;
  if (ReadWhole(proc_ + "/meminfo", &meminfo)) {
    std::istringstream lines(meminfo);
    std::string key, unit;
    double kib = 0, total = 0, available = -1;
    while (lines >> key >> kib) {
      std::getline(lines, unit);
      if (key == "MemTotal:") total = kib * 1024;
      if (key == "MemAvailable:") available = kib * 1024;
    }
    sample->system_memory_total_bytes = total;
    if (available >= 0) sample->system_memory_used_bytes = total - available;
  }
}

ProcSample ProcSampler::Sample() {
  ProcSample sample;
  std::map<Key, Counters> now;
  bool io_readable = false;
  Collect(&now, &sample, &io_readable);
  auto time = std::chrono::steady_clock::now();
  double seconds = std::chrono::duration<double>(time - last_time_).count();

  // Deltas per process: one that appeared since the last sample ran only within the period,
  // so all its time counts. A process that ended within the period loses its last slice
  // (its time moves to its parent's cutime, which would count the earlier slices twice).
  double ticks = 0, read_bytes = 0, write_bytes = 0;
  for (const auto& [key, c] : now) {
    auto before = last_.find(key);
    const Counters* b = before == last_.end() ? nullptr : &before->second;
    ticks += c.cpu_ticks - (b ? b->cpu_ticks : 0);
    if (c.read_bytes && c.write_bytes) {
      bool had = b && b->read_bytes && b->write_bytes;
      read_bytes += *c.read_bytes - (had ? *b->read_bytes : 0);
      write_bytes += *c.write_bytes - (had ? *b->write_bytes : 0);
    }
  }
  if (seconds > 0) {
    sample.cpu_percent = std::max(0.0, 100.0 * ticks / ticks_per_second_ / seconds);
    if (io_readable) {
      sample.read_bytes_per_s = std::max(0.0, read_bytes / seconds);
      sample.write_bytes_per_s = std::max(0.0, write_bytes / seconds);
    }
  }
  last_ = std::move(now);
  last_time_ = time;
  return sample;
}

}  // namespace cloudfit

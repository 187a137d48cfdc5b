// The proof of concept: runs, throughput parsing, MTTR, and the report.
#include "cloudfit/poc.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>

#include "cloudfit/table.h"
#include "measure/child_process.h"
#include "util/strings.h"

namespace cloudfit {

namespace {

using Clock = std::chrono::steady_clock;
// How often the run loops look at the clock and for signals while the command runs.
constexpr double kPollSeconds = 0.05;

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double WallNow() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

// The newest regular file under `dir` (recursively: trainers write checkpoint-500/ folders)
// and its mtime in seconds since the epoch. Empty path when there is none.
std::string NewestFile(const std::string& dir, double* mtime) {
  namespace fs = std::filesystem;
  std::string newest;
  *mtime = 0;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    struct stat st;
    if (stat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    double t = st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9;
    if (newest.empty() || t > *mtime) {
      newest = it->path().string();
      *mtime = t;
    }
  }
  return newest;
}

std::vector<std::string> Substitute(const std::vector<std::string>& command, int gpus) {
  std::vector<std::string> out;
  for (std::string arg : command) {
    for (size_t at = arg.find("{gpus}"); at != std::string::npos; at = arg.find("{gpus}", at)) {
      arg.replace(at, 6, std::to_string(gpus));
    }
    out.push_back(std::move(arg));
  }
  return out;
}

std::string VisibleDevices(int gpus) {
  std::string out;
  for (int i = 0; i < gpus; ++i) out += (i ? "," : "") + std::to_string(i);
  return out;
}

enum class RunEnd {
  kStop,        // when the time is up: SIGTERM, then SIGKILL after the grace period
  kKill,        // when the time is up: SIGKILL to the group, as a preempted node
  kFirstValue,  // at the first throughput value (or the time limit): stop as kStop
};

struct RunContext {
  const PocOptions& options;
  const std::regex& pattern;
};

// One run of the command on `gpus` GPUs for at most `limit` seconds. `first_value` receives
// when the first throughput line came; `end_time` when the run was stopped or killed.
Status RunOnce(const RunContext& ctx, int gpus, double limit, RunEnd end, PocRun* run,
               std::optional<Clock::time_point>* first_value, Clock::time_point* end_time) {
  const PocOptions& o = ctx.options;
  run->gpus = gpus;
  ChildOptions child_options;
  child_options.argv = Substitute(o.command, gpus);
  child_options.env = {{"CUDA_VISIBLE_DEVICES", VisibleDevices(gpus)},
                       {"CLOUDFIT_POC_GPUS", std::to_string(gpus)}};
  child_options.merge_stderr = true;
  child_options.null_stdin = true;
  child_options.on_line = [&](const std::string& line) {
    double value;
    if (ParseThroughput(ctx.pattern, line, &value)) {
      run->values.push_back(value);
      if (first_value && !*first_value) *first_value = Clock::now();
    }
    if (o.on_output) o.on_output(gpus, line);
  };
  std::unique_ptr<ChildProcess> child;
  Clock::time_point start = Clock::now();
  Status s = ChildProcess::Start(std::move(child_options), &child);
  if (!s.ok()) return s;
  for (;;) {
    if (int sig = SignalCatcher::TakePending()) {
      child->Stop(o.stop_grace_seconds);
      return Status::InvalidArgument(
          fmt::format("interrupted by signal {}; the command's "
                      "process group was stopped",
                      sig));
    }
    if (child->Wait(kPollSeconds)) {
      run->ended_by_itself = true;
      run->exit_code = child->exit_code();
      *end_time = Clock::now();
      break;
    }
    bool got_value = end == RunEnd::kFirstValue && first_value && first_value->has_value();
    if (got_value || Since(start) >= limit) {
      *end_time = Clock::now();
      if (end == RunEnd::kKill) {
        child->SignalGroup(SIGKILL);
        child->Wait(-1);
        run->killed = true;
      } else {
        child->Stop(o.stop_grace_seconds);
      }
      break;
    }
  }
  child->Reap();
  run->seconds = Since(start);
  run->throughput = MedianAfterWarmup(run->values, o.warmup);
  return Status::OK();
}

std::string GpuWord(int n) { return n == 1 ? "1 GPU" : fmt::format("{} GPUs", n); }

void CheckRun(const PocRun& run, const PocOptions& o, std::vector<std::string>* warnings) {
  std::string name = "the " + GpuWord(run.gpus) + " run";
  if (run.values.empty() && !run.ended_by_itself && !run.killed) {
    // Stopped at --duration before a first throughput line: on a real GPU, importing the
    // framework, building the model and the first steps' autotuning took 15-20 s (PyTorch on an
    // H200), so a short --duration can end a healthy run before it reports.
    warnings->push_back(fmt::format(
        "{} printed no line matching --throughput-regex in its {} s and was stopped still "
        "running: it may not have reached its first report (give a longer --duration)",
        name, FormatNumberShort(run.seconds)));
  } else if (run.values.empty()) {
    warnings->push_back(name + " printed no line matching --throughput-regex");
  } else if (static_cast<int>(run.values.size()) <= o.warmup) {
    warnings->push_back(
        fmt::format("{} printed {} throughput values, not more than --warmup "
                    "{}: the median of them all is used",
                    name, run.values.size(), o.warmup));
  }
  if (run.ended_by_itself && run.exit_code && *run.exit_code != 0) {
    warnings->push_back(fmt::format("{} exited with code {}", name, *run.exit_code));
  }
}

}  // namespace

const std::string& DefaultThroughputRegex() {
  static const std::string pattern =
      R"(([0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)\s*(?:it|its|iter|iters|step|steps|)"
      R"(sample|samples|seq|seqs|token|tokens|tok|img|imgs|image|images)\s*/\s*s(?:ec)?\b)";
  return pattern;
}

Status CheckPocOptions(const PocOptions& o) {
  if (o.command.empty() || o.command[0].empty()) {
    return Status::InvalidArgument(
        "no command: give it after '--', e.g. cloudfit poc -- "
        "torchrun --nproc_per_node={gpus} train.py");
  }
  if (o.gpus < 1) return Status::InvalidArgument("--gpus: must be at least 1");
  if (!(o.duration_seconds > 0) || !std::isfinite(o.duration_seconds)) {
    return Status::InvalidArgument("--duration: must be a positive number of seconds");
  }
  if (o.warmup < 0) return Status::InvalidArgument("--warmup: must be 0 or more");
  std::string regex = o.throughput_regex.empty() ? DefaultThroughputRegex() : o.throughput_regex;
  try {
    std::regex compiled(regex, std::regex::ECMAScript | std::regex::icase);
    if (compiled.mark_count() < 1) {
      return Status::InvalidArgument("--throughput-regex: '" + regex +
                                     "' has no capture group; put the number in ( )");
    }
  } catch (const std::regex_error& e) {
    return Status::InvalidArgument("--throughput-regex: '" + regex +
                                   "' is not a valid regular expression (" + e.what() + ")");
  }
  bool has_dir = !o.checkpoint_dir.empty(), has_kill = o.kill_after_seconds != 0;
  if (has_dir != has_kill) {
    return Status::InvalidArgument(
        "--checkpoint-dir and --kill-after go together: give both to measure MTTR");
  }
  if (has_kill) {
    if (!(o.kill_after_seconds > 0) || o.kill_after_seconds >= o.duration_seconds) {
      return Status::InvalidArgument(
          "--kill-after: must be more than 0 and less than "
          "--duration (" +
          FormatNumberShort(o.duration_seconds) + " s)");
    }
    std::error_code ec;
    if (!std::filesystem::is_directory(o.checkpoint_dir, ec)) {
      return Status::InvalidArgument("--checkpoint-dir: '" + o.checkpoint_dir +
                                     "' is not a directory");
    }
    if (!(o.restart_timeout_seconds > 0)) {
      return Status::InvalidArgument("--restart-timeout: must be a positive number of seconds");
    }
  }
  if (!(o.stop_grace_seconds >= 0)) {
    return Status::InvalidArgument("--stop-grace: must be 0 or more seconds");
  }
  return Status::OK();
}

bool ParseThroughput(const std::regex& pattern, const std::string& line, double* value) {
  if (line.size() > kMaxThroughputLineBytes) return false;
  std::smatch match;
  if (!std::regex_search(line, match, pattern) || match.size() < 2 || !match[1].matched) {
    return false;
  }
  return ParseDouble(Trim(match[1].str()), value);
}

std::optional<double> MedianAfterWarmup(const std::vector<double>& values, int warmup) {
  if (values.empty()) return std::nullopt;
  size_t skip = static_cast<size_t>(std::max(warmup, 0));
  std::vector<double> kept(values.size() > skip ? values.begin() + skip : values.begin(),
                           values.end());
  std::sort(kept.begin(), kept.end());
  size_t n = kept.size();
  return n % 2 ? kept[n / 2] : (kept[n / 2 - 1] + kept[n / 2]) / 2;
}

Status RunPoc(const PocOptions& o, PocResult* out) {
  Status s = CheckPocOptions(o);
  if (!s.ok()) return s;
  std::regex pattern(o.throughput_regex.empty() ? DefaultThroughputRegex() : o.throughput_regex,
                     std::regex::ECMAScript | std::regex::icase);
  RunContext ctx{o, pattern};
  PocResult result;
  result.gpus = o.gpus;
  result.warmup = o.warmup;
  bool mttr = o.kill_after_seconds > 0;
  auto progress = [&](const std::string& line) {
    if (o.on_progress) o.on_progress(line);
  };

  Clock::time_point end_time;
  progress(fmt::format("running on 1 GPU for up to {} s", FormatNumberShort(o.duration_seconds)));
  s = RunOnce(ctx, 1, o.duration_seconds, RunEnd::kStop, &result.single, nullptr, &end_time);
  if (!s.ok()) return s;
  CheckRun(result.single, o, &result.warnings);

  if (o.gpus > 1 || mttr) {
    PocRun multi;
    double limit = mttr ? o.kill_after_seconds : o.duration_seconds;
    progress(mttr ? fmt::format("running on {}, killing it after {} s", GpuWord(o.gpus),
                                FormatNumberShort(limit))
                  : fmt::format("running on {} for up to {} s", GpuWord(o.gpus),
                                FormatNumberShort(limit)));
    double kill_wall = 0;
    s = RunOnce(ctx, o.gpus, limit, mttr ? RunEnd::kKill : RunEnd::kStop, &multi, nullptr,
                &end_time);
    if (!s.ok()) return s;
    kill_wall = WallNow() - Since(end_time);
    CheckRun(multi, o, &result.warnings);

    if (mttr && !multi.killed) {
      result.warnings.push_back(
          fmt::format("the {} run ended by itself before --kill-after {} s: MTTR not measured",
                      GpuWord(o.gpus), FormatNumberShort(o.kill_after_seconds)));
    } else if (mttr) {
      PocMttr m;
      m.kill_after_seconds = o.kill_after_seconds;
      double mtime = 0;
      m.newest_checkpoint = NewestFile(o.checkpoint_dir, &mtime);
      if (m.newest_checkpoint.empty()) {
        result.warnings.push_back("--checkpoint-dir '" + o.checkpoint_dir +
                                  "' held no file at the kill: the restart starts from scratch");
        m.lost_work_seconds = multi.seconds;
      } else {
        m.lost_work_seconds = std::max(0.0, kill_wall - mtime);
        if (*m.lost_work_seconds > multi.seconds) {
          result.warnings.push_back(
              "the newest checkpoint predates the killed run: it was "
              "left by an earlier run");
        }
      }
      Clock::time_point kill_time = end_time;
      progress(fmt::format("restarting on {} until its first throughput line", GpuWord(o.gpus)));
      PocRun restart;
      std::optional<Clock::time_point> first;
      s = RunOnce(ctx, o.gpus, o.restart_timeout_seconds, RunEnd::kFirstValue, &restart, &first,
                  &end_time);
      if (!s.ok()) return s;
      if (first) {
        m.mttr_seconds = std::chrono::duration<double>(*first - kill_time).count();
      } else {
        result.warnings.push_back(
            restart.ended_by_itself
                ? "the restarted run ended without a throughput line: MTTR not measured"
                : fmt::format("the restarted run printed no throughput within "
                              "--restart-timeout {} s: MTTR not measured",
                              FormatNumberShort(o.restart_timeout_seconds)));
      }
      result.mttr = m;
    }
    result.multi = std::move(multi);
  }

  if (o.gpus > 1 && result.multi && result.single.throughput && result.multi->throughput &&
      *result.single.throughput > 0) {
    result.scaling_efficiency = *result.multi->throughput / (o.gpus * *result.single.throughput);
  }
  *out = std::move(result);
  return Status::OK();
}

namespace {

std::string ValueNote(const PocRun& run, int warmup) {
  if (run.values.empty()) return "no throughput line";
  size_t used = run.values.size() > static_cast<size_t>(warmup)
                    ? run.values.size() - static_cast<size_t>(warmup)
                    : run.values.size();
  std::string note =
      fmt::format("median of {} values over {} s", used, FormatNumber(run.seconds, 1));
  if (run.killed) note += ", killed";
  return note;
}

nlohmann::json RunJson(const PocRun& run) {
  using nlohmann::json;
  return {{"gpus", run.gpus},
          {"seconds", run.seconds},
          {"ended_by_itself", run.ended_by_itself},
          {"exit_code", run.exit_code ? json(*run.exit_code) : json(nullptr)},
          {"killed", run.killed},
          {"values", run.values},
          {"throughput", run.throughput ? json(*run.throughput) : json(nullptr)}};
}

std::string Optional(const std::optional<double>& v, int digits, const std::string& unit) {
  return v ? FormatNumber(*v, digits) + unit : "-";
}

}  // namespace

std::string PocText(const PocResult& r) {
  Table table({{"figure", "figure"}, {"value", "value", true}, {"note", "note"}});
  table.AddRow({"throughput, 1 GPU", Optional(r.single.throughput, 2, " /s"),
                ValueNote(r.single, r.warmup)});
  if (r.multi && r.gpus > 1) {
    table.AddRow({"throughput, " + GpuWord(r.gpus), Optional(r.multi->throughput, 2, " /s"),
                  ValueNote(*r.multi, r.warmup)});
    table.AddRow({"scaling efficiency", Optional(r.scaling_efficiency, 3, ""),
                  fmt::format("thr({0}) / ({0} x thr(1)); 1 = linear", r.gpus)});
  }
  if (r.mttr) {
    table.AddRow({"MTTR", Optional(r.mttr->mttr_seconds, 2, " s"),
                  "SIGKILL to the first throughput line of the restart"});
    table.AddRow({"lost work", Optional(r.mttr->lost_work_seconds, 2, " s"),
                  r.mttr->newest_checkpoint.empty() ? "no checkpoint: the whole run"
                                                    : "since " + r.mttr->newest_checkpoint});
  }
  std::string out = "poc: throughput as the command prints it (units per second)\n" +
                    table.Render(OutputFormat::kTable);
  for (const std::string& w : r.warnings) out += "warning: " + w + "\n";
  return out;
}

nlohmann::json PocJson(const PocResult& r) {
  using nlohmann::json;
  json doc = {
      {"schema", "cloudfit.poc/v1"},
      {"gpus", r.gpus},
      {"warmup", r.warmup},
      {"single", RunJson(r.single)},
      {"multi", r.multi ? RunJson(*r.multi) : json(nullptr)},
      {"scaling_efficiency", r.scaling_efficiency ? json(*r.scaling_efficiency) : json(nullptr)},
      {"warnings", r.warnings}};
  if (r.mttr) {
    const PocMttr& m = *r.mttr;
    doc["mttr"] = {
        {"kill_after_s", m.kill_after_seconds},
        {"mttr_s", m.mttr_seconds ? json(*m.mttr_seconds) : json(nullptr)},
        {"lost_work_s", m.lost_work_seconds ? json(*m.lost_work_seconds) : json(nullptr)},
        {"newest_checkpoint",
         m.newest_checkpoint.empty() ? json(nullptr) : json(m.newest_checkpoint)}};
  } else {
    doc["mttr"] = nullptr;
  }
  return doc;
}

}  // namespace cloudfit

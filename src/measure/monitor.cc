// Sampling a job, summarising the series and advising on the instance.
#include "cloudfit/monitor.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "cloudfit/table.h"
#include "measure/child_process.h"
#include "measure/proc_sampler.h"
#include "util/strings.h"

namespace cloudfit {

namespace {

using Clock = std::chrono::steady_clock;
constexpr double kGiB = 1024.0 * 1024 * 1024;
// How long a command stopped by --duration gets to exit after SIGTERM before SIGKILL.
constexpr double kStopGraceSeconds = 10;
// The longest the loop waits before looking for signals and for the pid again.
constexpr double kPollSeconds = 0.05;

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

bool ProcessExists(int pid) {
  std::error_code ec;
  return std::filesystem::exists("/proc/" + std::to_string(pid), ec);
}

}  // namespace

Status RunMonitor(const MonitorOptions& o, MonitorRecording* out) {
  if (o.command.empty() == (o.pid <= 0)) {
    return Status::InvalidArgument("give either a command to run or a pid to watch");
  }
  if (!(o.interval_seconds > 0)) return Status::InvalidArgument("interval must be positive");
  MonitorRecording rec;
  rec.command = o.command;
  rec.interval_seconds = o.interval_seconds;
  rec.cpu_cores = ProcSampler::OnlineCpus();
  rec.gpu_unavailable = o.gpu ? "" : (o.gpu_unavailable.empty() ? "no GPU sampler"
                                                                 : o.gpu_unavailable);

  std::unique_ptr<ChildProcess> child;
  if (!o.command.empty()) {
    ChildOptions options;
    options.argv = o.command;
    options.foreground_terminal = true;
    Status s = ChildProcess::Start(std::move(options), &child);
    if (!s.ok()) return s;
    rec.pid = child->pid();
  } else {
    if (!ProcessExists(o.pid)) {
      return Status::NotFound(fmt::format("no process with pid {}", o.pid));
    }
    rec.pid = o.pid;
  }

  ProcSampler proc(rec.pid);
  Clock::time_point start = Clock::now();
  double last_sample = 0;
  auto take_sample = [&]() {
    MonitorSample s;
    ProcSample p = proc.Sample();
    s.time_seconds = Since(start);
    s.processes = p.processes;
    s.cpu_percent = p.cpu_percent;
    s.cpu_share_percent = p.cpu_percent / rec.cpu_cores;
    s.rss_bytes = p.rss_bytes;
    s.read_bytes_per_s = p.read_bytes_per_s;
    s.write_bytes_per_s = p.write_bytes_per_s;
    s.system_memory_used_bytes = p.system_memory_used_bytes;
    s.system_memory_total_bytes = p.system_memory_total_bytes;
    if (o.gpu) s.gpus = o.gpu->Sample();
    last_sample = s.time_seconds;
    rec.samples.push_back(std::move(s));
    if (o.on_sample) o.on_sample(rec.samples.back());
    return p.root_alive;
  };

  double next = o.interval_seconds;
  bool signalled = false;
  for (;;) {
    if (int sig = SignalCatcher::TakePending()) {
      signalled = true;
      if (!child) {
        rec.stopped_by = "signal";
        break;
      }
      // Forwarded to the whole group; we go on sampling until the command has ended.
      child->SignalGroup(sig);
    }
    double now = Since(start);
    if (o.duration_seconds > 0 && now >= o.duration_seconds) {
      take_sample();
      rec.stopped_by = "duration";
      if (child) child->Stop(kStopGraceSeconds);
      break;
    }
    double until = std::min(next, o.duration_seconds > 0 ? o.duration_seconds : next);
    double wait = std::clamp(until - now, 0.0, kPollSeconds);
    if (child) {
      if (child->Wait(wait)) {
        // A last, partial period, unless it would be too short to mean anything.
        if (Since(start) - last_sample >= o.interval_seconds / 4) take_sample();
        rec.stopped_by = signalled ? "signal" : "exit";
        break;
      }
    } else {
      std::this_thread::sleep_for(std::chrono::duration<double>(wait));
      if (!ProcessExists(rec.pid)) {
        rec.stopped_by = "pid-gone";
        break;
      }
    }
    if (Since(start) >= next) {
      bool alive = take_sample();
      // A slow sample (many processes, a slow NVML call) must not make the next ones bunch up.
      next = std::max(next + o.interval_seconds, last_sample + o.interval_seconds / 2);
      if (!child && !alive) {
        rec.stopped_by = "pid-gone";
        break;
      }
    }
  }
  rec.duration_seconds = Since(start);
  if (child) {
    child->Wait(-1);
    rec.exit_code = child->exit_code();
    child->Reap();
  }
  *out = std::move(rec);
  return Status::OK();
}

SeriesStats ComputeStats(std::string key, std::string title, std::string unit,
                         std::vector<double> values) {
  SeriesStats s;
  s.key = std::move(key);
  s.title = std::move(title);
  s.unit = std::move(unit);
  s.count = static_cast<int>(values.size());
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / values.size();
  size_t rank = static_cast<size_t>(std::ceil(0.95 * values.size()));
  s.p95 = values[std::max<size_t>(rank, 1) - 1];
  s.max = values.back();
  return s;
}

const SeriesStats* MonitorSummary::Find(const std::string& key) const {
  for (const SeriesStats& s : series) {
    if (s.key == key) return &s;
  }
  return nullptr;
}

MonitorSummary Summarize(const MonitorRecording& rec) {
  MonitorSummary m;
  m.duration_seconds = rec.duration_seconds;
  m.samples = static_cast<int>(rec.samples.size());
  m.cpu_cores = rec.cpu_cores;
  std::vector<double> util, mem_pct, mem_used, power, sm_clock, cpu, share, rss, sys_mem, rd, wr;
  for (const MonitorSample& s : rec.samples) {
    cpu.push_back(s.cpu_percent);
    share.push_back(s.cpu_share_percent);
    rss.push_back(s.rss_bytes / kGiB);
    if (s.system_memory_total_bytes > 0) {
      sys_mem.push_back(100 * s.system_memory_used_bytes / s.system_memory_total_bytes);
    }
    if (s.read_bytes_per_s) rd.push_back(*s.read_bytes_per_s / 1e6);
    if (s.write_bytes_per_s) wr.push_back(*s.write_bytes_per_s / 1e6);
    if (s.gpus.empty()) continue;
    m.gpu_count = std::max(m.gpu_count, static_cast<int>(s.gpus.size()));
    if (m.gpu_name.empty()) m.gpu_name = s.gpus[0].name;
    double u = 0, mp = 0, mu = 0, pw = 0, clock = 0;
    for (const GpuSample& g : s.gpus) {
      u += g.utilization_percent;
      if (g.memory_total_bytes > 0) {
        mp += 100 * g.memory_used_bytes / g.memory_total_bytes;
        if (m.gpu_memory_total_bytes == 0 || g.memory_total_bytes < m.gpu_memory_total_bytes) {
          m.gpu_memory_total_bytes = g.memory_total_bytes;
        }
      }
      mu = std::max(mu, g.memory_used_bytes);
      pw += g.power_watts;
      clock += g.sm_clock_mhz;
    }
    double n = static_cast<double>(s.gpus.size());
    util.push_back(u / n);
    mem_pct.push_back(mp / n);
    mem_used.push_back(mu / kGiB);
    m.peak_gpu_memory_used_bytes = std::max(m.peak_gpu_memory_used_bytes, mu);
    if (pw > 0) power.push_back(pw / n);
    if (clock > 0) sm_clock.push_back(clock / n);
  }
  auto add = [&](const char* key, const char* title, const char* unit, std::vector<double>& v) {
    if (!v.empty()) m.series.push_back(ComputeStats(key, title, unit, std::move(v)));
  };
  add("gpu_util_percent", "GPU utilisation (mean of GPUs)", "%", util);
  add("gpu_memory_percent", "GPU memory used (mean of GPUs)", "%", mem_pct);
  add("gpu_memory_used_gib", "GPU memory used (fullest GPU)", "GiB", mem_used);
  add("gpu_power_w", "GPU power (per GPU)", "W", power);
  add("gpu_sm_clock_mhz", "GPU SM clock", "MHz", sm_clock);
  add("cpu_percent", "CPU of the process tree (100 = one core)", "%", cpu);
  add("cpu_share_percent", "CPU share of all cores", "%", share);
  add("rss_gib", "resident memory of the tree", "GiB", rss);
  add("system_memory_percent", "system memory used", "%", sys_mem);
  add("read_mb_per_s", "disk read of the tree", "MB/s", rd);
  add("write_mb_per_s", "disk write of the tree", "MB/s", wr);
  return m;
}

namespace {

// Dense 16-bit tensor peak (bf16, else fp16), else tf32 or fp32: the figure training runs at.
double ComputePeak(const Accelerator& a) {
  for (Precision p : {Precision::kBf16, Precision::kFp16, Precision::kTf32, Precision::kFp32}) {
    if (a.peak(p)) return *a.peak(p);
  }
  return 0;
}

double GpuMemoryPerGpu(const InstanceType& t) {
  if (t.gpu_count <= 0) return 0;
  if (t.gpu_memory_bytes > 0) return t.gpu_memory_bytes / t.gpu_count;
  return t.gpu ? t.gpu->memory_bytes : 0;
}

// The cheapest price of an instance type over its regions, in USD; nullopt when unpriced.
std::optional<double> CheapestUsd(const Catalog& catalog, const InstanceType& t,
                                  PricingMode mode) {
  std::optional<double> best;
  for (const RegionPrice& r : t.regions) {
    std::optional<double> price = r.price(mode);
    double usd = 0;
    if (!price || !catalog.Convert(*price, r.currency, "USD", &usd).ok()) continue;
    if (!best || usd < *best) best = usd;
  }
  return best;
}

struct Choice {
  const InstanceType* instance = nullptr;
  double price = 0;
};

// The cheapest priced instance that passes `fits`, from `provider` when it has one, else from
// any provider: moving within a cloud is the smaller step.
template <typename Fits>
Choice Cheapest(const Catalog& catalog, PricingMode mode, const std::string& provider,
                const Fits& fits) {
  for (int pass = provider.empty() ? 1 : 0; pass < 2; ++pass) {
    Choice best;
    for (const InstanceType& t : catalog.instances()) {
      if (pass == 0 && t.provider != provider) continue;
      if (!fits(t)) continue;
      std::optional<double> price = CheapestUsd(catalog, t, mode);
      if (!price) continue;
      if (!best.instance || *price < best.price ||
          (*price == best.price && t.name < best.instance->name)) {
        best = {&t, *price};
      }
    }
    if (best.instance) return best;
  }
  return {};
}

std::string Describe(const Choice& c) {
  const InstanceType& t = *c.instance;
  std::string hardware = t.has_gpu()
                             ? fmt::format("{} x {}", FormatNumber(t.gpu_count, 2), t.gpu_name())
                             : fmt::format("{} vCPUs, {} GiB", t.vcpus, FormatNumber(t.memory_gib(), 0));
  return fmt::format("{} ({}, {}; {} USD/h)", t.name, t.provider, hardware,
                     FormatNumber(c.price, 3));
}

void Suggest(const Choice& c, Advice* a) {
  if (!c.instance) return;
  a->suggested_instance = c.instance->name;
  a->suggested_provider = c.instance->provider;
  a->suggested_price_per_hour = c.price;
}

std::string Pct(double v) { return FormatNumber(v, 0) + "%"; }

}  // namespace

std::vector<Advice> AdviseFromSamples(const MonitorRecording& rec, const AdviceOptions& o) {
  std::vector<Advice> advice;
  if (rec.samples.empty()) {
    advice.push_back({"no-samples", "info",
                      "no samples: the job ended within the first interval; a shorter "
                      "--interval would catch it",
                      "", "", std::nullopt});
    return advice;
  }
  MonitorSummary m = Summarize(rec);
  const SeriesStats* share = m.Find("cpu_share_percent");
  const SeriesStats* cpu = m.Find("cpu_percent");
  const SeriesStats* rss = m.Find("rss_gib");
  double cpu_share = share ? share->mean : 0;
  bool cpu_saturated = cpu_share >= 100 * o.cpu_saturated_fraction;
  double cores_busy = cpu ? cpu->mean / 100 : 0;

  const InstanceType* current = nullptr;
  if (o.catalog && !o.current_instance.empty()) {
    if (!o.catalog->FindInstance(o.current_instance, &current).ok()) current = nullptr;
  }
  std::string provider = current ? current->provider : "";
  int vcpus = current ? current->vcpus : rec.cpu_cores;
  auto not_current = [&](const InstanceType& t) { return &t != current; };

  if (const SeriesStats* sys = m.Find("system_memory_percent");
      sys && sys->max > 100 * o.memory_full_fraction) {
    advice.push_back({"system-memory-full", "warning",
                      fmt::format("system memory peaked at {} used: the job risks swapping or "
                                  "the OOM killer; an instance with more memory per vCPU",
                                  Pct(sys->max)),
                      "", "", std::nullopt});
  }

  if (m.gpu_count == 0) {
    advice.push_back({"no-gpu", "info",
                      "no GPU was sampled (" + rec.gpu_unavailable +
                          "): the advice below is about CPUs only",
                      "", "", std::nullopt});
    double peak_rss = rss ? rss->max * kGiB : 0;
    if (cpu_saturated) {
      Advice a{"cpu-saturated", "warning",
               fmt::format("the job kept {} of {} cores busy on average ({} share): more vCPUs "
                           "would speed it up",
                           FormatNumber(cores_busy, 1), rec.cpu_cores, Pct(cpu_share)),
               "", "", std::nullopt};
      if (o.catalog) {
        Choice c = Cheapest(*o.catalog, o.pricing, provider, [&](const InstanceType& t) {
          return !t.has_gpu() && t.vcpus >= 2 * vcpus &&
                 t.memory_bytes >= peak_rss * o.memory_headroom && not_current(t);
        });
        if (c.instance) a.message += "; e.g. " + Describe(c);
        Suggest(c, &a);
      }
      advice.push_back(std::move(a));
    } else if (cpu_share < 100 * o.cpu_idle_fraction) {
      double p95_cores = cpu ? cpu->p95 / 100 : 0;
      int need = std::max(1, static_cast<int>(std::ceil(p95_cores * 1.25)));
      Advice a{"cpu-idle", "info",
               fmt::format("the job used {} cores on average ({} at p95) of {}: an instance "
                           "with {} vCPU{} would do",
                           FormatNumber(cores_busy, 1), FormatNumber(p95_cores, 1),
                           rec.cpu_cores, need, need == 1 ? "" : "s"),
               "", "", std::nullopt};
      if (o.catalog) {
        Choice c = Cheapest(*o.catalog, o.pricing, provider, [&](const InstanceType& t) {
          return !t.has_gpu() && t.vcpus >= need && t.vcpus < vcpus &&
                 t.memory_bytes >= peak_rss * o.memory_headroom && not_current(t);
        });
        if (c.instance) a.message += "; e.g. " + Describe(c);
        Suggest(c, &a);
      }
      advice.push_back(std::move(a));
    } else {
      advice.push_back({"fits", "info",
                        fmt::format("the job kept {} of {} cores busy on average: the CPU count "
                                    "fits",
                                    FormatNumber(cores_busy, 1), rec.cpu_cores),
                        "", "", std::nullopt});
    }
    return advice;
  }

  // The GPUs the job runs on: from --instance, else the driver's name and the count seen.
  const Accelerator* gpu = current ? current->gpu : nullptr;
  double count = current && current->has_gpu() ? current->gpu_count : m.gpu_count;
  if (!gpu && o.catalog) gpu = o.catalog->FindAcceleratorByDriverName(m.gpu_name);
  std::optional<double> current_price;
  if (current && o.catalog) current_price = CheapestUsd(*o.catalog, *current, o.pricing);
  double current_compute = gpu ? ComputePeak(*gpu) * count : 0;
  double current_memory =
      current && current->has_gpu() ? GpuMemoryPerGpu(*current) : m.gpu_memory_total_bytes;
  double util = m.Find("gpu_util_percent")->mean;
  double util_p95 = m.Find("gpu_util_percent")->p95;
  double peak_used = m.peak_gpu_memory_used_bytes;
  double memory_fraction = m.gpu_memory_total_bytes > 0 ? peak_used / m.gpu_memory_total_bytes : 0;
  std::string gpus_seen = fmt::format("{} x {}", m.gpu_count, m.gpu_name);
  std::string unresolved =
      gpu || !o.catalog ? ""
                        : " ('" + m.gpu_name + "' is not in the catalog; --instance names the "
                          "current instance)";

  if (memory_fraction > o.memory_full_fraction) {
    Advice a{"no-memory-headroom", "warning",
             fmt::format("GPU memory peaked at {} of {} GiB ({}): no headroom, a longer "
                         "sequence or a larger batch will run out of memory; use a GPU with "
                         "more memory",
                         FormatNumber(peak_used / kGiB, 1),
                         FormatNumber(m.gpu_memory_total_bytes / kGiB, 1),
                         Pct(100 * memory_fraction)),
             "", "", std::nullopt};
    if (o.catalog) {
      double need = std::max(peak_used * o.memory_headroom, current_memory * 1.1);
      Choice c = Cheapest(*o.catalog, o.pricing, provider, [&](const InstanceType& t) {
        return t.has_gpu() && t.gpu && t.gpu_count >= count && GpuMemoryPerGpu(t) >= need &&
               ComputePeak(*t.gpu) * t.gpu_count >= current_compute && not_current(t);
      });
      if (c.instance) a.message += ", e.g. " + Describe(c);
      Suggest(c, &a);
    }
    advice.push_back(std::move(a));
  }

  if (util < o.low_gpu_util_percent && cpu_saturated) {
    Advice a{"input-bound", "warning",
             fmt::format("{} (utilisation {} on average) while the job's processes keep {} "
                         "of {} cores busy: it is input-bound; give it more vCPUs per GPU or "
                         "move data loading and preprocessing to a companion CPU instance",
                         m.gpu_count == 1 ? "the GPU idles" : "the GPUs idle", Pct(util),
                         FormatNumber(cores_busy, 1), rec.cpu_cores),
             "", "", std::nullopt};
    if (o.catalog && gpu) {
      Choice c = Cheapest(*o.catalog, o.pricing, provider, [&](const InstanceType& t) {
        return t.gpu == gpu && t.gpu_count == count && t.vcpus > vcpus && not_current(t);
      });
      if (c.instance) a.message += "; the same GPUs with more vCPUs: " + Describe(c);
      Suggest(c, &a);
    }
    advice.push_back(std::move(a));
  } else if (util < o.low_gpu_util_percent) {
    Advice a{"low-gpu-utilization", "warning",
             fmt::format("GPU utilisation averages {} (p95 {}) on {}: fewer or smaller GPUs "
                         "would do the same work",
                         Pct(util), Pct(util_p95), gpus_seen) + unresolved,
             "", "", std::nullopt};
    if (o.catalog && gpu) {
      double need_memory = peak_used * o.memory_headroom;
      double need_compute = current_compute * util / 100 * o.compute_margin;
      Choice c = Cheapest(*o.catalog, o.pricing, provider, [&](const InstanceType& t) {
        if (!t.has_gpu() || !t.gpu || !not_current(t)) return false;
        double compute = ComputePeak(*t.gpu) * t.gpu_count;
        if (GpuMemoryPerGpu(t) < need_memory || compute < need_compute) return false;
        if (compute >= current_compute) return false;  // not smaller
        return true;
      });
      if (c.instance && current_price && c.price >= *current_price) c = {};
      if (c.instance) {
        a.message += fmt::format(
            "; {} holds the peak memory ({} GiB per GPU with {} headroom) and the work seen",
            Describe(c), FormatNumber(peak_used / kGiB, 1),
            Pct(100 * (o.memory_headroom - 1)));
      } else {
        a.message += "; no cheaper catalog instance holds the peak memory and the work seen";
      }
      Suggest(c, &a);
    }
    advice.push_back(std::move(a));
  } else {
    advice.push_back({"fits", "info",
                      fmt::format("GPU utilisation averages {} (p95 {}) on {}: the GPUs are kept "
                                  "busy",
                                  Pct(util), Pct(util_p95), gpus_seen),
                      "", "", std::nullopt});
  }
  return advice;
}

}  // namespace cloudfit

// The monitor: advice over synthetic samples, the /proc sampler and the child process helper on
// real children, the CSV and SVG outputs, and the command line end to end.
#include "cloudfit/monitor.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "measure/child_process.h"
#include "measure/proc_sampler.h"
#include "test_support.h"

namespace cloudfit {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

// `samples` samples one second apart of `gpus` GPUs named `gpu_name`, each with the given
// utilisation and memory, and a process tree using `cpu_share` percent of `cores` cores.
MonitorRecording Synthetic(int gpus, const std::string& gpu_name, double util, double used_gib,
                           double total_gib, double cpu_share, int cores = 8, int samples = 20) {
  MonitorRecording rec;
  rec.command = {"python", "train.py"};
  rec.interval_seconds = 1;
  rec.cpu_cores = cores;
  rec.duration_seconds = samples;
  if (gpus == 0) rec.gpu_unavailable = "no NVML";
  for (int i = 0; i < samples; ++i) {
    MonitorSample s;
    s.time_seconds = i + 1;
    s.processes = 3;
    s.cpu_share_percent = cpu_share;
    s.cpu_percent = cpu_share * cores;
    s.rss_bytes = 1 * kGiB;
    s.system_memory_used_bytes = 8 * kGiB;
    s.system_memory_total_bytes = 64 * kGiB;
    for (int g = 0; g < gpus; ++g) {
      GpuSample gs;
      gs.index = g;
      gs.name = gpu_name;
      gs.utilization_percent = util;
      gs.memory_used_bytes = used_gib * kGiB;
      gs.memory_total_bytes = total_gib * kGiB;
      gs.power_watts = 100;
      gs.sm_clock_mhz = 1400;
      s.gpus.push_back(gs);
    }
    rec.samples.push_back(s);
  }
  return rec;
}

const Advice* FindAdvice(const std::vector<Advice>& advice, const std::string& code) {
  for (const Advice& a : advice) {
    if (a.code == code) return &a;
  }
  return nullptr;
}

std::string Codes(const std::vector<Advice>& advice) {
  std::string out;
  for (const Advice& a : advice) out += a.code + ": " + a.message + "\n";
  return out;
}

TEST(MonitorStats, MeanP95Max) {
  std::vector<double> values;
  for (int i = 100; i >= 1; --i) values.push_back(i);
  SeriesStats s = ComputeStats("k", "t", "%", values);
  EXPECT_EQ(s.count, 100);
  EXPECT_DOUBLE_EQ(s.mean, 50.5);
  EXPECT_DOUBLE_EQ(s.p95, 95);
  EXPECT_DOUBLE_EQ(s.max, 100);
  SeriesStats one = ComputeStats("k", "t", "%", {7});
  EXPECT_DOUBLE_EQ(one.p95, 7);
}

TEST(MonitorSummary, AveragesGpusAndKeepsThePerGpuMemoryPeak) {
  MonitorRecording rec = Synthetic(2, "NVIDIA A10G", 40, 10, 24, 10);
  rec.samples[3].gpus[1].memory_used_bytes = 20 * kGiB;
  rec.samples[3].gpus[1].utilization_percent = 100;
  MonitorSummary m = Summarize(rec);
  EXPECT_EQ(m.gpu_count, 2);
  EXPECT_EQ(m.gpu_name, "NVIDIA A10G");
  EXPECT_DOUBLE_EQ(m.peak_gpu_memory_used_bytes, 20 * kGiB);
  ASSERT_NE(m.Find("gpu_util_percent"), nullptr);
  EXPECT_DOUBLE_EQ(m.Find("gpu_util_percent")->max, 70);
  EXPECT_EQ(m.Find("read_mb_per_s"), nullptr);  // no I/O figures in these samples
}

TEST(MonitorAdvice, LowUtilizationNamesASmallerInstance) {
  Catalog catalog = testing::FixtureCatalog();
  // 8 x A100 at 3%: the work fits one 121-TFLOPS L4 (GCP) but not an A10G, the only smaller
  // AWS GPU, so the advice leaves AWS.
  MonitorRecording rec = Synthetic(8, "NVIDIA A100-SXM4-40GB", 3, 10, 40, 5);
  AdviceOptions options;
  options.catalog = &catalog;
  options.current_instance = "p4d.24xlarge";
  std::vector<Advice> advice = AdviseFromSamples(rec, options);
  const Advice* low = FindAdvice(advice, "low-gpu-utilization");
  ASSERT_NE(low, nullptr) << Codes(advice);
  EXPECT_EQ(low->suggested_instance, "g2-standard-4") << low->message;
  EXPECT_NE(low->message.find("fewer or smaller GPUs"), std::string::npos);
  EXPECT_NE(low->message.find("g2-standard-4"), std::string::npos);
  EXPECT_EQ(FindAdvice(advice, "input-bound"), nullptr);

  // At 1% an A10G is enough, and the same provider is preferred.
  rec = Synthetic(8, "NVIDIA A100-SXM4-40GB", 1, 10, 40, 5);
  advice = AdviseFromSamples(rec, options);
  low = FindAdvice(advice, "low-gpu-utilization");
  ASSERT_NE(low, nullptr) << Codes(advice);
  EXPECT_EQ(low->suggested_instance, "g5.xlarge") << low->message;
  EXPECT_EQ(low->suggested_provider, "aws");
}

TEST(MonitorAdvice, LowUtilizationFromTheDriversGpuName) {
  Catalog catalog = testing::FixtureCatalog();
  MonitorRecording rec = Synthetic(1, "NVIDIA A100-SXM4-40GB", 10, 5, 40, 5);
  AdviceOptions options;
  options.catalog = &catalog;
  std::vector<Advice> advice = AdviseFromSamples(rec, options);
  const Advice* low = FindAdvice(advice, "low-gpu-utilization");
  ASSERT_NE(low, nullptr) << Codes(advice);
  EXPECT_FALSE(low->suggested_instance.empty()) << low->message;
  EXPECT_NE(low->suggested_instance, "p4d.24xlarge");

  // The built-in catalog has a cheaper, smaller GPU for the same job too.
  AdviceOptions built_in;
  built_in.catalog = &testing::BuiltInCatalog();
  advice = AdviseFromSamples(rec, built_in);
  low = FindAdvice(advice, "low-gpu-utilization");
  ASSERT_NE(low, nullptr) << Codes(advice);
  EXPECT_FALSE(low->suggested_instance.empty()) << low->message;
}

TEST(MonitorAdvice, FullGpuMemoryWarnsOfNoHeadroom) {
  Catalog catalog = testing::FixtureCatalog();
  MonitorRecording rec = Synthetic(1, "NVIDIA A10G", 85, 23, 24, 20);
  AdviceOptions options;
  options.catalog = &catalog;
  std::vector<Advice> advice = AdviseFromSamples(rec, options);
  const Advice* full = FindAdvice(advice, "no-memory-headroom");
  ASSERT_NE(full, nullptr) << Codes(advice);
  EXPECT_EQ(full->severity, "warning");
  EXPECT_NE(full->message.find("no headroom"), std::string::npos);
  // A GPU with more memory than the A10G's 24 GiB.
  const InstanceType* suggested = nullptr;
  ASSERT_TRUE(catalog.FindInstance(full->suggested_instance, &suggested).ok()) << full->message;
  EXPECT_GT(suggested->gpu_memory_gib() / suggested->gpu_count, 24);
  EXPECT_NE(FindAdvice(advice, "fits"), nullptr);  // 85% busy: the GPU itself is right

  // 80% full is not a warning.
  advice = AdviseFromSamples(Synthetic(1, "NVIDIA A10G", 85, 19, 24, 20), options);
  EXPECT_EQ(FindAdvice(advice, "no-memory-headroom"), nullptr) << Codes(advice);
}

TEST(MonitorAdvice, IdleGpuWithBusyCpusIsInputBound) {
  Catalog catalog = testing::FixtureCatalog();
  MonitorRecording rec = Synthetic(1, "NVIDIA A10G", 8, 6, 24, 97, 4);
  AdviceOptions options;
  options.catalog = &catalog;
  std::vector<Advice> advice = AdviseFromSamples(rec, options);
  const Advice* input = FindAdvice(advice, "input-bound");
  ASSERT_NE(input, nullptr) << Codes(advice);
  EXPECT_NE(input->message.find("vCPUs"), std::string::npos);
  EXPECT_NE(input->message.find("companion"), std::string::npos);
  // Not also told to shrink the GPU: the GPU waits for its input.
  EXPECT_EQ(FindAdvice(advice, "low-gpu-utilization"), nullptr) << Codes(advice);
}

TEST(MonitorAdvice, WithoutGpuAdvisesOnCpus) {
  Catalog catalog = testing::FixtureCatalog();
  AdviceOptions options;
  options.catalog = &catalog;
  std::vector<Advice> busy = AdviseFromSamples(Synthetic(0, "", 0, 0, 0, 98, 4), options);
  EXPECT_NE(FindAdvice(busy, "no-gpu"), nullptr) << Codes(busy);
  ASSERT_NE(FindAdvice(busy, "cpu-saturated"), nullptr) << Codes(busy);
  EXPECT_NE(FindAdvice(busy, "cpu-saturated")->message.find("more vCPUs"), std::string::npos);

  std::vector<Advice> idle = AdviseFromSamples(Synthetic(0, "", 0, 0, 0, 3, 16), options);
  EXPECT_NE(FindAdvice(idle, "no-gpu"), nullptr) << Codes(idle);
  const Advice* small = FindAdvice(idle, "cpu-idle");
  ASSERT_NE(small, nullptr) << Codes(idle);
  EXPECT_EQ(small->suggested_instance, "c7i.large") << small->message;

  std::vector<Advice> none = AdviseFromSamples(MonitorRecording{}, options);
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(none[0].code, "no-samples");
}

TEST(MonitorAdvice, WithoutCatalogStillAdvises) {
  std::vector<Advice> advice =
      AdviseFromSamples(Synthetic(2, "NVIDIA H100 80GB HBM3", 12, 30, 80, 5), AdviceOptions{});
  const Advice* low = FindAdvice(advice, "low-gpu-utilization");
  ASSERT_NE(low, nullptr) << Codes(advice);
  EXPECT_TRUE(low->suggested_instance.empty());
}

TEST(ChildProcess, CapturesLinesEnvironmentAndExitCode) {
  std::vector<std::string> lines;
  ChildOptions options;
  options.argv = {"sh", "-c",
                  "printf 'a\\rb\\n'; echo \"$CLOUDFIT_TEST_VAR\"; echo err >&2; "
                  "printf tail; exit 5"};
  options.env = {{"CLOUDFIT_TEST_VAR", "hello"}};
  options.merge_stderr = true;
  options.on_line = [&](const std::string& line) { lines.push_back(line); };
  std::unique_ptr<ChildProcess> child;
  ASSERT_TRUE(ChildProcess::Start(options, &child).ok());
  ASSERT_TRUE(child->Wait(10));
  EXPECT_EQ(child->exit_code(), 5);
  EXPECT_EQ(child->term_signal(), 0);
  child->Reap();
  EXPECT_EQ(lines, (std::vector<std::string>{"a", "b", "hello", "err", "tail"}));

  // With null_stdin the child reads an empty input rather than ours.
  lines.clear();
  options.argv = {"sh", "-c", "cat; echo end"};
  options.null_stdin = true;
  ASSERT_TRUE(ChildProcess::Start(options, &child).ok());
  ASSERT_TRUE(child->Wait(10));
  EXPECT_EQ(lines, (std::vector<std::string>{"end"}));
}

// A child that never ends a line reaches the callback in pieces, not as one growing buffer.
TEST(ChildProcess, AnEndlessLineArrivesInBoundedPieces) {
  size_t longest = 0, total = 0;
  ChildOptions options;
  options.argv = {"sh", "-c", "head -c 5000000 /dev/zero | tr '\\0' x; echo; echo done"};
  std::string last;
  options.on_line = [&](const std::string& line) {
    longest = std::max(longest, line.size());
    total += line.size();
    last = line;
  };
  std::unique_ptr<ChildProcess> child;
  ASSERT_TRUE(ChildProcess::Start(options, &child).ok());
  ASSERT_TRUE(child->Wait(30));
  EXPECT_EQ(child->exit_code(), 0);
  EXPECT_EQ(total, 5000000u + 4);
  EXPECT_LE(longest, kMaxChildLineBytes + 4096);
  EXPECT_EQ(last, "done");
}

TEST(ChildProcess, TimesOutKillsTheGroupAndReportsMissingPrograms) {
  ChildOptions options;
  options.argv = {"sh", "-c", "sleep 30 & sleep 30"};
  std::unique_ptr<ChildProcess> child;
  ASSERT_TRUE(ChildProcess::Start(options, &child).ok());
  EXPECT_FALSE(child->Wait(0.1));
  child->SignalGroup(SIGKILL);
  ASSERT_TRUE(child->Wait(10));
  EXPECT_EQ(child->term_signal(), SIGKILL);
  EXPECT_EQ(child->exit_code(), 128 + SIGKILL);

  // One argument with spaces is a shell command line.
  options.argv = {"exit 7"};
  ASSERT_TRUE(ChildProcess::Start(options, &child).ok());
  ASSERT_TRUE(child->Wait(10));
  EXPECT_EQ(child->exit_code(), 7);

  options.argv = {"/nonexistent/program"};
  Status s = ChildProcess::Start(options, &child);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/nonexistent/program"), std::string::npos) << s.message();
}

TEST(ProcSampler, CountsTheCpuOfAGrandchild) {
  // The busy loop runs in a grandchild: the child only waits for it.
  ChildOptions options;
  options.argv = {"sh", "-c", "sh -c 'while :; do :; done' & wait"};
  std::unique_ptr<ChildProcess> child;
  ASSERT_TRUE(ChildProcess::Start(options, &child).ok());
  ProcSampler sampler(child->pid());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ProcSample s = sampler.Sample();
  child->Stop(1);
  EXPECT_TRUE(s.root_alive);
  EXPECT_GE(s.processes, 2);
  // One core would be 100; a loaded test machine gives less, but far more than the idle parent.
  EXPECT_GT(s.cpu_percent, 5);
  EXPECT_GT(s.rss_bytes, 0);
  EXPECT_GT(s.system_memory_total_bytes, 0);
  EXPECT_GT(s.system_memory_used_bytes, 0);
  EXPECT_GE(ProcSampler::OnlineCpus(), 1);
}

// Every tag closes in order, the way an XML parser would check it.
bool WellFormed(const std::string& xml, std::string* why) {
  std::vector<std::string> open;
  size_t at = 0;
  while ((at = xml.find('<', at)) != std::string::npos) {
    size_t end = xml.find('>', at);
    if (end == std::string::npos) return *why = "unclosed tag", false;
    std::string tag = xml.substr(at + 1, end - at - 1);
    at = end + 1;
    if (tag.empty() || tag[0] == '?' || tag[0] == '!') continue;
    if (tag.back() == '/') continue;
    std::string name = tag.substr(tag[0] == '/' ? 1 : 0);
    name = name.substr(0, name.find_first_of(" \t\n"));
    if (tag[0] != '/') {
      open.push_back(name);
    } else if (open.empty() || open.back() != name) {
      return *why = "</" + name + "> closes " + (open.empty() ? "nothing" : open.back()), false;
    } else {
      open.pop_back();
    }
  }
  if (!open.empty()) return *why = "<" + open.back() + "> never closed", false;
  return true;
}

TEST(MonitorOutputs, CsvAndSvgOfARealRun) {
  MonitorOptions options;
  options.command = {"sh", "-c", "sleep 0.35"};
  options.interval_seconds = 0.1;
  options.gpu_unavailable = "no GPU in tests";
  MonitorRecording rec;
  ASSERT_TRUE(RunMonitor(options, &rec).ok());
  EXPECT_EQ(rec.exit_code, 0);
  EXPECT_EQ(rec.stopped_by, "exit");
  ASSERT_GE(rec.samples.size(), 2u);

  std::istringstream csv(MonitorCsv(rec));
  std::string header, row;
  std::getline(csv, header);
  EXPECT_EQ(header.rfind("time_s,processes,cpu_percent,cpu_share_percent,rss_bytes", 0), 0u);
  int rows = 0;
  while (std::getline(csv, row)) {
    ++rows;
    EXPECT_EQ(std::count(row.begin(), row.end(), ','),
              std::count(header.begin(), header.end(), ','));
  }
  EXPECT_GE(rows, 2);

  std::string svg = MonitorSvg(rec);
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("<polyline"), std::string::npos);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  std::string why;
  EXPECT_TRUE(WellFormed(svg, &why)) << why;
}

TEST(MonitorOutputs, GpuColumnsAndEscapedSvg) {
  MonitorRecording rec = Synthetic(2, "NVIDIA A10G", 50, 10, 24, 20, 8, 3);
  rec.command = {"sh", "-c", "echo '<&>'"};
  std::string csv = MonitorCsv(rec);
  EXPECT_NE(csv.find("gpu1_memory_used_bytes"), std::string::npos);
  EXPECT_NE(csv.find(",NVIDIA A10G,50,"), std::string::npos) << csv;
  std::string svg = MonitorSvg(rec);
  EXPECT_NE(svg.find("&lt;&amp;&gt;"), std::string::npos);
  EXPECT_EQ(std::count(svg.begin(), svg.end(), '\n') > 10, true);
  std::string why;
  EXPECT_TRUE(WellFormed(svg, &why)) << why;

  MonitorSummary m = Summarize(rec);
  std::vector<Advice> advice = AdviseFromSamples(rec, AdviceOptions{});
  nlohmann::json doc = MonitorJson(rec, m, advice);
  EXPECT_EQ(doc["schema"], "cloudfit.monitor/v1");
  EXPECT_EQ(doc["gpu"]["count"], 2);
  EXPECT_FALSE(doc["series"].empty());
  EXPECT_NE(MonitorText(rec, m, advice).find("GPU utilisation"), std::string::npos);
}

// The command line, end to end.
TEST(MonitorCli, ExitsWithTheCommandsExitCode) {
  testing::TempDir dir;
  testing::ProgramRun r = testing::RunCloudfit(dir, "monitor --interval 0.1 -- sh -c 'exit 3'");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.out.find("exit code 3"), std::string::npos) << r.out;
}

TEST(MonitorCli, WritesCsvSvgAndJson) {
  testing::TempDir dir;
  testing::ProgramRun r =
      testing::RunCloudfit(dir,
                           "monitor --interval 0.1 --samples-csv run.csv --plot run.svg --json -- "
                           "sh -c 'sleep 0.3'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["schema"], "cloudfit.monitor/v1");
  EXPECT_EQ(doc["exit_code"], 0);
  EXPECT_FALSE(doc["advice"].empty());
  EXPECT_GE(doc["samples"].get<int>(), 2);
  EXPECT_EQ(testing::ReadWholeFile(dir.path() + "/run.csv").rfind("time_s,", 0), 0u);
  EXPECT_NE(testing::ReadWholeFile(dir.path() + "/run.svg").find("</svg>"), std::string::npos);
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos);
  }
}

TEST(MonitorCli, ForwardsSigtermAndStillWritesFiles) {
  testing::TempDir dir;
  // The signal is sent once monitor says it samples (its first line on stderr): before that,
  // it is not catching signals yet.
  std::string script =
      "cd '" + dir.path() + "' && ('" + std::string(CLOUDFIT_BINARY) +
      "' monitor --interval 0.1 --samples-csv run.csv -- sleep 20 >out.txt 2>err.txt "
      "& pid=$!; i=0; while [ ! -s err.txt ] && [ $i -lt 200 ]; do sleep 0.05; "
      "i=$((i+1)); done; sleep 0.2; kill -TERM $pid; wait $pid; echo $? >rc.txt)";
  ASSERT_EQ(std::system(script.c_str()), 0);
  EXPECT_EQ(testing::ReadWholeFile(dir.path() + "/rc.txt"), "143\n")
      << testing::ReadWholeFile(dir.path() + "/err.txt");
  EXPECT_EQ(testing::ReadWholeFile(dir.path() + "/run.csv").rfind("time_s,", 0), 0u);
  EXPECT_NE(testing::ReadWholeFile(dir.path() + "/out.txt").find("stopped by signal"),
            std::string::npos);
}

TEST(MonitorCli, BadFlagsExitWithTwoAndNameTheFlag) {
  testing::TempDir dir;
  testing::ProgramRun r = testing::RunCloudfit(dir, "monitor --interval -1 -- true");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--interval"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("0.05"), std::string::npos) << r.err;

  r = testing::RunCloudfit(dir, "monitor --interval 0.5");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--pid"), std::string::npos) << r.err;

  r = testing::RunCloudfit(dir, "monitor --duration -3 -- true");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--duration"), std::string::npos) << r.err;

  r = testing::RunCloudfit(dir, "monitor --instance no-such-type -- true");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--instance"), std::string::npos) << r.err;

  r = testing::RunCloudfit(dir, "monitor --samples-csv missing-dir/run.csv -- true");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--samples-csv"), std::string::npos) << r.err;

  // The old spelling still works, with a notice naming the new one.
  r = testing::RunCloudfit(dir, "monitor --csv missing-dir/run.csv -- true");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--csv is deprecated; use --samples-csv"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace cloudfit

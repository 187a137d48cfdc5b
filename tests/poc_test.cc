// The proof of concept, driven by small shell scripts that print a throughput depending on the
// GPU count they are given, and write checkpoints.
#include "cloudfit/poc.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cloudfit/gpu_sampler.h"
#include "test_support.h"

namespace cloudfit {
namespace {

// Prints "<rate> it/s" $LINES_TO_PRINT times (8 unless set), 0.02 s apart, where the rate is 100 on
// one GPU and 90 per GPU on more (a scaling efficiency of 0.9); on its third line it writes a
// checkpoint into $2 when given. Also echoes what CUDA_VISIBLE_DEVICES it got.
constexpr const char* kTrainScript = R"(#!/bin/sh
n=$1
if [ "$n" -eq 1 ]; then rate=100; else rate=$((90 * n)); fi
echo "devices=$CUDA_VISIBLE_DEVICES gpus=$CLOUDFIT_POC_GPUS"
sleep 0.1
i=0
while [ $i -lt ${LINES_TO_PRINT:-8} ]; do
  echo "step $i loss 1.5 $rate it/s"
  if [ $i -eq 2 ] && [ -n "$2" ]; then echo weights > "$2/step-$i.ckpt"; fi
  i=$((i + 1))
  sleep 0.02
done
)";

std::string Script(const testing::TempDir& dir) {
  std::string path = dir.Write("train.sh", kTrainScript);
  std::string chmod = "chmod +x '" + path + "'";
  EXPECT_EQ(std::system(chmod.c_str()), 0);
  return path;
}

TEST(PocThroughput, DefaultRegexReadsCommonProgressLines) {
  std::regex re(DefaultThroughputRegex(), std::regex::ECMAScript | std::regex::icase);
  double v = 0;
  EXPECT_TRUE(ParseThroughput(re, "step 10: 12.3 it/s", &v));
  EXPECT_DOUBLE_EQ(v, 12.3);
  EXPECT_TRUE(ParseThroughput(re, " 40%|####      | 20/50 [00:02<00:03,  9.87it/s]", &v));
  EXPECT_DOUBLE_EQ(v, 9.87);
  EXPECT_TRUE(ParseThroughput(re, "throughput: 850 samples/s", &v));
  EXPECT_DOUBLE_EQ(v, 850);
  EXPECT_TRUE(ParseThroughput(re, "1.5e3 Tokens/sec", &v));
  EXPECT_DOUBLE_EQ(v, 1500);
  EXPECT_FALSE(ParseThroughput(re, "100%|####| 3/3 [00:07<00:00, 2.50s/it]", &v));
  EXPECT_FALSE(ParseThroughput(re, "loss 1.23", &v));
}

// std::regex recurses per character: a long line of digits from the command overflowed the
// stack (100,000) or took seconds. Such lines are not searched.
TEST(PocThroughput, LongLinesAreNotSearched) {
  std::regex re(DefaultThroughputRegex(), std::regex::ECMAScript | std::regex::icase);
  double v = 0;
  EXPECT_FALSE(ParseThroughput(re, std::string(200000, '7') + " it/s", &v));
  std::string longest(kMaxThroughputLineBytes - 8, ' ');
  longest += "9.5 it/s";
  EXPECT_TRUE(ParseThroughput(re, longest, &v));
  EXPECT_DOUBLE_EQ(v, 9.5);
}

TEST(PocThroughput, MedianAfterWarmup) {
  EXPECT_EQ(MedianAfterWarmup({}, 2), std::nullopt);
  EXPECT_EQ(MedianAfterWarmup({1, 1000, 10, 30, 20}, 2), 20);
  EXPECT_EQ(MedianAfterWarmup({1, 1000, 10, 20}, 2), 15);
  EXPECT_EQ(MedianAfterWarmup({5, 7}, 2), 6);  // all within the warmup: all of them
}

TEST(PocOptions, ErrorsNameTheFlag) {
  PocOptions o;
  o.command = {"true"};
  EXPECT_TRUE(CheckPocOptions(o).ok());
  auto message = [](PocOptions o) { return CheckPocOptions(o).message(); };
  PocOptions bad = o;
  bad.throughput_regex = "([0-9]+";
  EXPECT_NE(message(bad).find("--throughput-regex"), std::string::npos);
  bad.throughput_regex = "[0-9]+ it/s";
  EXPECT_NE(message(bad).find("capture group"), std::string::npos);
  bad = o;
  bad.gpus = 0;
  EXPECT_NE(message(bad).find("--gpus"), std::string::npos);
  bad = o;
  bad.kill_after_seconds = 5;
  EXPECT_NE(message(bad).find("--checkpoint-dir"), std::string::npos);
  bad.checkpoint_dir = "/";
  bad.duration_seconds = 5;
  EXPECT_NE(message(bad).find("--kill-after"), std::string::npos);
  bad = o;
  bad.command.clear();
  EXPECT_NE(message(bad).find("no command"), std::string::npos);
}

TEST(Poc, ScalingEfficiencyFromAFakeTrainer) {
  testing::TempDir dir;
  PocOptions o;
  o.command = {Script(dir), "{gpus}"};
  o.gpus = 2;
  o.duration_seconds = 10;  // the script ends long before
  std::vector<std::string> lines;
  o.on_output = [&](int gpus, const std::string& line) {
    lines.push_back(std::to_string(gpus) + ":" + line);
  };
  PocResult r;
  Status s = RunPoc(o, &r);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_TRUE(r.single.throughput);
  EXPECT_DOUBLE_EQ(*r.single.throughput, 100);
  EXPECT_EQ(r.single.values.size(), 8u);
  EXPECT_TRUE(r.single.ended_by_itself);
  ASSERT_TRUE(r.multi && r.multi->throughput);
  EXPECT_DOUBLE_EQ(*r.multi->throughput, 180);
  ASSERT_TRUE(r.scaling_efficiency);
  EXPECT_NEAR(*r.scaling_efficiency, 0.9, 1e-9);
  EXPECT_FALSE(r.mttr);
  EXPECT_TRUE(r.warnings.empty()) << r.warnings[0];
  EXPECT_NE(std::find(lines.begin(), lines.end(), "1:devices=0 gpus=1"), lines.end());
  EXPECT_NE(std::find(lines.begin(), lines.end(), "2:devices=0,1 gpus=2"), lines.end());

  std::string text = PocText(r);
  EXPECT_NE(text.find("scaling efficiency"), std::string::npos) << text;
  EXPECT_NE(text.find("0.9"), std::string::npos) << text;
  nlohmann::json doc = PocJson(r);
  EXPECT_EQ(doc["schema"], "cloudfit.poc/v1");
  EXPECT_NEAR(doc["scaling_efficiency"].get<double>(), 0.9, 1e-9);
  EXPECT_TRUE(doc["mttr"].is_null());
}

TEST(Poc, StopsARunAtItsDurationAndWarnsWithoutThroughput) {
  PocOptions o;
  o.command = {"sh", "-c", "while :; do echo '7.5 samples/s'; sleep 0.05; done"};
  o.duration_seconds = 0.5;
  o.stop_grace_seconds = 2;
  PocResult r;
  ASSERT_TRUE(RunPoc(o, &r).ok());
  EXPECT_FALSE(r.single.ended_by_itself);
  ASSERT_TRUE(r.single.throughput);
  EXPECT_DOUBLE_EQ(*r.single.throughput, 7.5);
  EXPECT_FALSE(r.multi);  // one GPU asked: no second run

  // Still starting up when its time is up: the warning says so, not only that nothing matched.
  o.command = {"sh", "-c", "echo loading; sleep 5; echo '7.5 samples/s'"};
  ASSERT_TRUE(RunPoc(o, &r).ok());
  EXPECT_FALSE(r.single.ended_by_itself);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("stopped still running"), std::string::npos) << r.warnings[0];
  EXPECT_NE(r.warnings[0].find("longer --duration"), std::string::npos) << r.warnings[0];

  o.command = {"sh", "-c", "echo no numbers here; exit 4"};
  ASSERT_TRUE(RunPoc(o, &r).ok());
  EXPECT_FALSE(r.single.throughput);
  ASSERT_EQ(r.warnings.size(), 2u);
  EXPECT_NE(r.warnings[0].find("--throughput-regex"), std::string::npos);
  EXPECT_EQ(r.warnings[0].find("longer --duration"), std::string::npos) << r.warnings[0];
  EXPECT_NE(r.warnings[1].find("code 4"), std::string::npos);
}

TEST(Poc, MttrAndLostWorkAfterAKill) {
  testing::TempDir dir;
  std::string checkpoints = dir.path() + "/ckpt";
  std::filesystem::create_directory(checkpoints);
  PocOptions o;
  // 20 lines take 0.5 s or more: the kill at 0.3 s comes while the run trains. The 1-GPU run
  // wrote a checkpoint too, so the newest one exists however slow the machine is.
  o.command = {"env", "LINES_TO_PRINT=20", Script(dir), "{gpus}", checkpoints};
  o.gpus = 2;
  o.duration_seconds = 5;
  o.checkpoint_dir = checkpoints;
  o.kill_after_seconds = 0.3;
  o.stop_grace_seconds = 2;
  PocResult r;
  Status s = RunPoc(o, &r);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_TRUE(r.multi);
  EXPECT_TRUE(r.multi->killed);
  ASSERT_TRUE(r.mttr);
  ASSERT_TRUE(r.mttr->mttr_seconds) << (r.warnings.empty() ? "" : r.warnings[0]);
  // The restart sleeps 0.1 s before its first line.
  EXPECT_GT(*r.mttr->mttr_seconds, 0.05);
  EXPECT_LT(*r.mttr->mttr_seconds, 5);
  EXPECT_NE(r.mttr->newest_checkpoint.find("step-2.ckpt"), std::string::npos);
  ASSERT_TRUE(r.mttr->lost_work_seconds);
  EXPECT_GE(*r.mttr->lost_work_seconds, 0);
  EXPECT_LT(*r.mttr->lost_work_seconds, 5);
  EXPECT_NE(PocText(r).find("MTTR"), std::string::npos);
  EXPECT_FALSE(PocJson(r)["mttr"]["mttr_s"].is_null());
}

TEST(Poc, EmptyCheckpointDirMeansStartingFromScratch) {
  testing::TempDir dir;
  std::string empty = dir.path() + "/empty";
  std::filesystem::create_directory(empty);
  PocOptions o;
  o.command = {"env", "LINES_TO_PRINT=20", Script(dir), "{gpus}"};
  o.gpus = 1;
  o.duration_seconds = 5;
  o.checkpoint_dir = empty;
  o.kill_after_seconds = 0.3;
  PocResult r;
  ASSERT_TRUE(RunPoc(o, &r).ok());
  ASSERT_TRUE(r.mttr);
  EXPECT_TRUE(r.mttr->newest_checkpoint.empty());
  bool warned = false;
  for (const std::string& w : r.warnings)
    warned = warned || w.find("from scratch") != std::string::npos;
  EXPECT_TRUE(warned);
}

int RunCli(const testing::TempDir& dir, const std::string& args, std::string* out,
           std::string* err) {
  testing::ProgramRun r = testing::RunCloudfit(dir, args);
  *out = r.out;
  *err = r.err;
  return r.exit_code;
}

TEST(PocCli, JsonWithAFakeTrainer) {
  testing::TempDir dir;
  std::string out, err;
  int code =
      RunCli(dir, "poc --gpus 2 --duration 10 --quiet --json -- '" + Script(dir) + "' '{gpus}'",
             &out, &err);
  ASSERT_EQ(code, 0) << err;
  nlohmann::json doc = nlohmann::json::parse(out);
  EXPECT_NEAR(doc["scaling_efficiency"].get<double>(), 0.9, 1e-9);
  EXPECT_EQ(doc["single"]["throughput"], 100);
}

TEST(PocCli, BadFlagsExitWithTwoAndNameTheFlag) {
  testing::TempDir dir;
  std::string out, err;
  EXPECT_EQ(RunCli(dir, "poc --gpus 1 --throughput-regex '(' -- true", &out, &err), 2);
  EXPECT_NE(err.find("--throughput-regex"), std::string::npos) << err;
  EXPECT_EQ(RunCli(dir, "poc --gpus 0 -- true", &out, &err), 2);
  EXPECT_NE(err.find("--gpus"), std::string::npos) << err;
  EXPECT_EQ(RunCli(dir, "poc --gpus 1 --kill-after 2 -- true", &out, &err), 2);
  EXPECT_NE(err.find("--checkpoint-dir"), std::string::npos) << err;
  EXPECT_EQ(RunCli(dir, "poc --gpus 1", &out, &err), 2);
  EXPECT_NE(err.find("no command"), std::string::npos) << err;

  // Without --gpus, the count comes from NVML; with no GPU that is an error naming --gpus.
  std::string why;
  if (OpenGpuSampler(&why) == nullptr) {
    EXPECT_EQ(RunCli(dir, "poc -- true", &out, &err), 2);
    EXPECT_NE(err.find("--gpus"), std::string::npos) << err;
  }
}

}  // namespace
}  // namespace cloudfit

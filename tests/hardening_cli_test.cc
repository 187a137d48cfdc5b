// Regression tests of issue 13 against the real binary: every class of bad input found by the
// hostile-user campaign (crashes, wrong answers, hangs, data loss, lost batch lines) now ends
// with a message naming the field and exit code 2, and what was right before still is.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_support.h"

namespace cloudfit {
namespace {

namespace fs = std::filesystem;
using testing::ProgramRun;
using testing::TempDir;

ProgramRun Cloudfit(const TempDir& dir, const std::vector<std::string>& args) {
  std::string line;
  for (const std::string& a : args) line += testing::ShellQuote(a) + " ";
  return testing::RunCloudfit(dir, line);
}

// Bad input: exit 2, the message names the field, nothing on stdout, no crash.
void ExpectRefused(const TempDir& dir, const std::vector<std::string>& args,
                   const std::string& message) {
  ProgramRun r = Cloudfit(dir, args);
  std::string joined;
  for (const std::string& a : args) joined += a.substr(0, 80) + " ";
  EXPECT_EQ(r.exit_code, 2) << joined << "\nstderr: " << r.err;
  EXPECT_NE(r.err.find(message), std::string::npos) << joined << "\nstderr: " << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "") << joined;
}

TEST(HardeningCliTest, NumbersAreFiniteAndInRange) {
  TempDir dir;
  const std::vector<std::string> lora = {"recommend",    "--kind",   "lora", "--model",
                                         "Llama-3.1-8B", "--tokens", "5e7"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = lora;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  // NaN used to pass every flag check and silently drop the deadline.
  ExpectRefused(dir, with({"--deadline-hours", "nan"}), "--deadline-hours: 'nan' is not allowed");
  ExpectRefused(dir, with({"--budget", "inf"}), "--budget: 'inf' is not allowed");
  ExpectRefused(dir, with({"--max-gpus", "NaN"}), "--total-gpus-max: 'NaN' is not allowed");
  // Negative or zero serving hours ranked negative costs first.
  ExpectRefused(dir,
                {"recommend", "--kind", "serve", "--model", "Llama-2-13B", "--serving-hours", "-5"},
                "--serving-hours: '-5' is not allowed");
  ExpectRefused(dir,
                {"recommend", "--kind", "serve", "--model", "Llama-2-13B", "--serving-hours", "0"},
                "--serving-hours: '0' is not allowed");
  ExpectRefused(
      dir,
      {"estimate", "--kind", "train", "--model", "ResNet-50", "--gpu", "A100", "--tokens", "nan"},
      "tokens: 'nan' is not allowed");
  ExpectRefused(dir, with({"--top", "1e30"}), "--top");
  ExpectRefused(dir, with({"--max-nodes", "99999999999"}), "--nodes-max");
  // Checks the recommender makes itself name the flag too, not the request field.
  ExpectRefused(dir, with({"--total-gpus-min", "8", "--total-gpus-max", "4"}),
                "--total-gpus-min: 8 is above the most GPUs asked for (4)");
  ExpectRefused(
      dir, {"recommend", "--kind", "serve", "--model", "Llama-2-13B", "--serving-hours", "0.002"},
      "--serving-hours: 0.002 is not allowed; hours of serving in [0.0167, 876000]");
  // export's counts go through the same check as every other whole number.
  std::vector<std::string> export_lora = lora;
  export_lora[0] = "export";
  export_lora.insert(export_lora.end(), {"--format", "skypilot"});
  auto exporting = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = export_lora;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  ExpectRefused(dir, exporting({"--rank", "nan"}), "--rank: 'nan' is not allowed");
  ExpectRefused(dir, exporting({"--rank", "1", "--disk-gb", "1e20"}),
                "--disk-gb: '1e20' is not allowed");
}

TEST(HardeningCliTest, CountsDoNotDivideByZeroOrWrap) {
  TempDir dir;
  // SIGFPE before: a GPU count inside the accepted range times a node count inside its own.
  ExpectRefused(dir,
                {"estimate", "--kind", "train", "--model", "Llama-3.1-8B", "--gpu", "H100",
                 "--gpus", "1024", "--nodes", "4096"},
                "--nodes: 1024 GPUs per node x 4096 nodes is not allowed; at most 262144");
  // A large cluster within the bound still estimates (with a batch that gives each of its
  // 131,072 GPUs a sample: a smaller one has no data-parallel layout, and says so).
  ProgramRun big =
      Cloudfit(dir, {"estimate", "--kind", "train", "--model", "Llama-3.1-8B", "--gpu", "H100",
                     "--gpus", "8", "--nodes", "16384", "--set", "batch=131072", "--json"});
  EXPECT_EQ(big.exit_code, 0) << big.err;
  // A fraction of a GPU was estimated as a whole GPU.
  ExpectRefused(
      dir,
      {"estimate", "--kind", "train", "--model", "ResNet-50", "--gpu", "A100", "--gpus", "0.0001"},
      "--gpus: 0.0001 is not allowed; a whole number of GPUs");
  // 2^54 KiB wrapped to a limit of 0 bytes.
  ExpectRefused(dir, {"serve", "--max-body-kib", "18014398509481984"},
                "--max-body-kib: '18014398509481984' is not allowed");
  ExpectRefused(dir, {"serve", "--port", "70000"}, "--port");
}

TEST(HardeningCliTest, ServingReplicasNeverWrapAround) {
  TempDir dir;
  // 10 M requests/s needed more than 2^31 replicas of a CPU VM, which wrapped to a negative
  // count and ranked first; now every candidate plans a positive, bounded count (LLM serving
  // plans stop at 1,000,000 replicas and say so) and a positive cost.
  ProgramRun r = Cloudfit(dir, {"recommend", "--kind", "serve", "--model", "Llama-3.1-8B",
                                "--request-rate", "1e7", "--json", "--top", "50"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json out = nlohmann::json::parse(r.out);
  for (const nlohmann::json& c : out["ranked"]) {
    EXPECT_GE(c.value("replicas", 1), 1) << c.dump();
    EXPECT_LE(c.value("replicas", 1), 1000000) << c.dump();
    EXPECT_GT(c.value("total_cost", 1.0), 0) << c.dump();
  }
  // One small GPU for 10 M requests/s of long prompts: far beyond a million replicas.
  r = Cloudfit(dir, {"estimate", "--kind", "serve", "--model", "Llama-3.1-8B", "--gpu", "T4",
                     "--precision", "int4", "--prompt-tokens", "8000", "--output-tokens", "2000",
                     "--request-rate", "1e7", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json e = nlohmann::json::parse(r.out);
  EXPECT_EQ(e["serving"]["replicas"], 1000000) << r.out;
  EXPECT_FALSE(e["serving"]["meets_targets"].get<bool>()) << r.out;
  EXPECT_NE(r.out.find("plans stop at"), std::string::npos) << r.out;
  // Serving that is not an LLM keeps its own bound, an error naming the field.
  ExpectRefused(dir,
                {"estimate", "--kind", "serve", "--model", "resnet50", "--gpu", "T4",
                 "--resolution", "8192", "--request-rate", "1e7"},
                "request_rate: ");
}

TEST(HardeningCliTest, LongAndHostileTextIsRefusedNotCrashedOn) {
  TempDir dir;
  std::string long_name(30000, 'a');
  // std::regex overflowed the stack on these.
  ExpectRefused(dir,
                {"estimate", "--kind", "lora", "--model", "Llama-3.1-8B", "--gpu", "A10",
                 "--measured", "0.12 it/s on 1x " + long_name},
                "--measured: '0.12 it/s on 1x aaaa");
  ExpectRefused(
      dir, {"estimate", "--kind", "lora", "--model", "Llama-3.1-8B", "--gpu", long_name + "80gb"},
      "names are at most 256 bytes");
  ExpectRefused(dir, {"estimate", "--kind", "lora", "--model", long_name, "--gpu", "A10"},
                "model: ");
  // An out-of-range number inside --measured threw std::out_of_range out of main.
  ExpectRefused(dir,
                {"estimate", "--kind", "lora", "--model", "Llama-3.1-8B", "--gpu", "A10",
                 "--measured", "0.12 it/s on 1x A10 x 99999999999999999999"},
                "the node count");
  // What was right stays right.
  ProgramRun ok = Cloudfit(dir, {"estimate", "--kind", "lora", "--model", "Llama-3.1-8B", "--gpu",
                                 "A10", "--measured", "0.12 it/s on 1x a10 24gb"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("calibrated from 0.12 it/s on 1x a10 24gb"), std::string::npos) << ok.out;
}

// A refused value is shown clipped to 64 bytes of valid UTF-8 whatever it was: a 5,000-byte or
// binary --sort, --currency, --region or --choice came back whole, raw bytes included.
TEST(HardeningCliTest, RefusedValuesAreShownClippedAndClean) {
  TempDir dir;
  std::string long_value(5000, 'z');
  std::string binary =
      "\xff\xfe\x01"
      "bad";
  struct Case {
    std::vector<std::string> args;
    std::string message;
  } cases[] = {
      {{"instances", "--sort", long_value}, "--sort: 'zzzz"},
      {{"instances", "--sort", binary}, "--sort: '"},
      {{"instances", "--currency", long_value}, "--currency: 'zzzz"},
      {{"instances", "--arch", binary}, "--arch: '"},
      {{"gpus", "--sort", long_value}, "--sort: 'zzzz"},
      {{"catalog", "refresh", "--region", long_value, "--out", "x"}, "--region: 'zzzz"},
      {{"compare", "--kind", "lora", "--model", "Llama-3.1-8B", long_value + "xH100", "1xA10"},
       "--choice: 'zzzz"},
      {{"recommend", "--kind", "lora", "--model", "Llama-3.1-8B", "--exclude-cost",
        std::string(200, 'z')},
       "--exclude-cost: 'zzzz"},
  };
  for (const Case& c : cases) {
    ExpectRefused(dir, c.args, c.message);
    ProgramRun r = Cloudfit(dir, c.args);
    EXPECT_LT(r.err.size(), 1000u) << c.message << ": " << r.err.substr(0, 200);
    EXPECT_EQ(r.err.find('\xff'), std::string::npos) << c.message << ": raw bytes shown";
  }
}

TEST(HardeningCliTest, FilesAreRegularAndBounded) {
  TempDir dir;
  // /dev/zero as a config.json ate memory until the OOM killer came.
  ExpectRefused(dir,
                {"estimate", "--kind", "inference", "--model-config", "/dev/zero", "--gpu", "L4"},
                "/dev/zero: not a regular file");
  ExpectRefused(dir, {"estimate", "--file", "/dev/zero", "--gpu", "L4"},
                "/dev/zero: not a regular file");
  ExpectRefused(dir,
                {"recommend", "--task", "/dev/zero", "--kind", "lora", "--model", "Llama-3.1-8B",
                 "--tokens", "5e7"},
                "/dev/zero: not a regular file");
  // Widths above 2^29 overflowed int in the estimator.
  nlohmann::json config = nlohmann::json::parse(
      testing::ReadWholeFile(testing::SourcePath("tests/fixtures/hf/Llama-3.1-8B.json")));
  config["hidden_size"] = 1 << 30;
  std::string path = dir.Write("huge/config.json", config.dump());
  ExpectRefused(dir, {"estimate", "--kind", "inference", "--model-config", path, "--gpu", "L4"},
                "field 'hidden_size' must be a positive integer up to 16777216");
}

TEST(HardeningCliTest, ImplausiblePricesAreRefusedWithFileLineAndField) {
  TempDir dir;
  fs::copy(testing::SourcePath("tests/fixtures/catalog"), dir.path() + "/cat",
           fs::copy_options::recursive);
  // A price of 1e-300 was "known", shown as 0 and ranked first.
  std::ofstream(dir.path() + "/cat/instances/aws.csv", std::ios::app)
      << "aws,g9.huge,g9,A10G,1,,4,16,,x86_64,10,0,,us-east-1,1e-300,,,,USD,https://x,"
         "2026-07-22,\n";
  ExpectRefused(dir, {"--catalog", dir.path() + "/cat", "instances"},
                "instances/aws.csv:7: field 'ondemand': '1e-300' is not allowed; an hourly price");
}

TEST(HardeningCliTest, OddSkyPilotValuesAreSkippedNeverThrown) {
  TempDir dir;
  // GpuInfo fields of unexpected types threw out of main ("internal error", exit 3).
  std::string vms = dir.Write(
      "aws/vms.csv",
      "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,"
      "Region\n"
      "p4d.24xlarge,A100,8,96,1152,\"{'Gpus': [{'MemoryInfo': 'lots'}]}\",32.77,,us-east-1\n"
      "p4d.24xlarge,A100,8,96,1152,\"{'Gpus': [{'MemoryInfo': {'SizeInMiB': 'x'}}]}\",32.77,,"
      "us-west-2\n"
      "p4d.24xlarge,A100,8,96,1152,\"{'Gpus': 7}\",32.77,,eu-west-1\n"
      "g5.xlarge,A10G,1,4,16,,1e-300,,us-east-1\n"
      "g5.2xlarge,A10G,1,8,32,,1.21,1e300,us-east-1\n");
  ProgramRun r = Cloudfit(dir, {"catalog", "import", "--format", "skypilot", "--as-of",
                                "2026-01-01", "--out", dir.path() + "/out", vms});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("5 rows read, 4 used"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("implausible price"), std::string::npos) << r.out;
  ProgramRun loads = Cloudfit(dir, {"--catalog", dir.path() + "/out", "catalog", "info"});
  EXPECT_EQ(loads.exit_code, 0) << loads.err;
}

TEST(HardeningCliTest, JsonLinesAnswerEveryLineWhateverItsBytes) {
  TempDir dir;
  std::string deep(100000, '[');
  std::string lines =
      "{\"id\": 1, \"kind\": \"train\", \"model\": \"ResNet-50\", \"gpu\": \"A100\"}\n"
      "\xff\xfe not utf-8 at all \x80\n"
      "{\"id\": 3, \"model\": \"\xc3\x28\"}\n" +
      deep + "\n" +
      "[1, 2]\n"
      "{\"id\": 6, \"kind\": \"train\", \"model\": \"ResNet-50\", \"gpu\": \"A100\", \"nodes\": "
      "1e300}\n"
      "{\"id\": 7, \"kind\": \"train\", \"model\": \"ResNet-50\", \"gpu\": \"A100\"}\n";
  std::string path = dir.Write("cases.jsonl", lines);
  ProgramRun r = Cloudfit(dir, {"estimate", "--jsonl", path});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  std::vector<nlohmann::json> out;
  std::istringstream stream(r.out);
  for (std::string line; std::getline(stream, line);) out.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(out.size(), 7u) << r.out;
  EXPECT_TRUE(out[0]["ok"]);
  EXPECT_FALSE(out[1]["ok"]);
  EXPECT_NE(out[1]["error"].get<std::string>().find("UTF-8"), std::string::npos) << out[1];
  EXPECT_FALSE(out[2]["ok"]);
  EXPECT_NE(out[3]["error"].get<std::string>().find("nested 100000 levels deep"),
            std::string::npos);
  EXPECT_EQ(out[4]["error"], "each line must be a JSON object");
  EXPECT_EQ(out[5]["id"], 6);
  EXPECT_NE(out[5]["error"].get<std::string>().find("nodes: "), std::string::npos) << out[5];
  EXPECT_TRUE(out[6]["ok"]) << out[6];
  EXPECT_EQ(out[6]["id"], 7);

  // recommend --jsonl the same way, with a bad option type that used to throw.
  std::string requests = dir.Write(
      "requests.jsonl",
      "{\"id\": \"a\", \"kind\": \"train\", \"model\": \"ResNet-50\", \"providers\": [1, 2]}\n"
      "\x80\n"
      "{\"id\": \"c\", \"kind\": \"train\", \"model\": \"ResNet-50\", \"top\": -1}\n"
      "{\"id\": \"d\", \"kind\": \"train\", \"model\": \"ResNet-50\", \"epochs\": 1, "
      "\"dataset_samples\": 1281167, \"top\": 1}\n");
  r = Cloudfit(dir, {"recommend", "--jsonl", requests});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  out.clear();
  std::istringstream stream2(r.out);
  for (std::string line; std::getline(stream2, line);) out.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(out.size(), 4u) << r.out;
  EXPECT_EQ(out[0]["error"], "providers[0]: expected a string");
  EXPECT_FALSE(out[1]["ok"]);
  EXPECT_NE(out[2]["error"].get<std::string>().find("top: '-1' is not allowed"), std::string::npos);
  EXPECT_TRUE(out[3]["ok"]) << out[3];
}

TEST(HardeningCliTest, CatalogWritesNeverDeleteWhatIsNotACatalog) {
  TempDir dir;
  // `catalog export d` removed d/p/thesis.tex.
  std::string thesis = dir.Write("d/p/thesis.tex", "years of work");
  ProgramRun r = Cloudfit(dir, {"catalog", "export", dir.path() + "/d"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("holds 'p/thesis.tex', which is not part of a catalog"), std::string::npos)
      << r.err;
  EXPECT_EQ(testing::ReadWholeFile(thesis), "years of work");
  ExpectRefused(dir,
                {"catalog", "import", "--format", "prices", "--out", dir.path() + "/d",
                 dir.Write("p.csv",
                           "instance_type,region,pricing_mode,price,currency,as_of\n"
                           "g5.xlarge,us-east-1,spot,0.5,USD,2026-11-01\n")},
                "thesis.tex");
  EXPECT_EQ(testing::ReadWholeFile(thesis), "years of work");

  // An empty or new directory, or an earlier export, is written without --force.
  r = Cloudfit(dir, {"catalog", "export", dir.path() + "/new"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir.path() + "/new/accelerators.csv"));
  r = Cloudfit(dir, {"catalog", "export", dir.path() + "/new"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // A catalog directory made by hand (no marker, only catalog files) is a catalog too.
  fs::remove(dir.path() + "/new/.cloudfit-catalog");
  r = Cloudfit(dir, {"catalog", "export", dir.path() + "/new"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // --force replaces anything, as asked.
  r = Cloudfit(dir, {"catalog", "export", "--force", dir.path() + "/d"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(thesis));
  EXPECT_TRUE(fs::exists(dir.path() + "/d/accelerators.csv"));
  // Nothing is left beside the directories.
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    std::string name = entry.path().filename().string();
    EXPECT_EQ(name.find(".tmp-"), std::string::npos) << name;
    EXPECT_EQ(name.find(".old-"), std::string::npos) << name;
  }
}

}  // namespace
}  // namespace cloudfit

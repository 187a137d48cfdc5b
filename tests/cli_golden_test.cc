// Runs the cloudfit binary on the fixture catalog and compares its output with the files under
// tests/golden/. CLOUDFIT_UPDATE_GOLDEN=1 rewrites them (review the diff before committing).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "test_support.h"

namespace {

namespace fs = std::filesystem;

struct Result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs cloudfit with the fixture catalog unless `use_fixture` is false.
Result RunCloudfit(const std::vector<std::string>& args, bool use_fixture = true) {
  fs::path dir = fs::temp_directory_path() / ("cloudfit-cli-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string command = "cd ";
  command += cloudfit::testing::ShellQuote(dir.string());
  command += " && env -u CLOUDFIT_CATALOG -u COLUMNS -u NO_COLOR CLOUDFIT_TODAY=2026-11-22 ";
  if (use_fixture) {
    command += "CLOUDFIT_CATALOG=";
    command +=
        cloudfit::testing::ShellQuote(std::string(CLOUDFIT_SOURCE_DIR) + "/tests/fixtures/catalog");
    command += " ";
  }
  command += cloudfit::testing::ShellQuote(CLOUDFIT_BINARY);
  for (const std::string& a : args) {
    command += ' ';
    command += cloudfit::testing::ShellQuote(a);
  }
  command += " >out.txt 2>err.txt";
  int status = std::system(command.c_str());
  Result r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = cloudfit::testing::ReadWholeFile(dir / "out.txt");
  r.err = cloudfit::testing::ReadWholeFile(dir / "err.txt");
  fs::remove_all(dir);
  return r;
}

// Replaces the checkout's absolute path with "<source>" so golden files hold no machine's path.
std::string WithoutSourceDir(std::string text) {
  const std::string source = CLOUDFIT_SOURCE_DIR;
  for (size_t at = text.find(source); at != std::string::npos; at = text.find(source, at)) {
    text.replace(at, source.size(), "<source>");
  }
  return text;
}

void ExpectGolden(const std::string& name, const std::vector<std::string>& args) {
  Result r = RunCloudfit(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r.out = WithoutSourceDir(r.out);
  fs::path golden = fs::path(CLOUDFIT_SOURCE_DIR) / "tests/golden" / (name + ".txt");
  const char* update = std::getenv("CLOUDFIT_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(golden, std::ios::binary) << r.out;
    return;
  }
  ASSERT_TRUE(fs::exists(golden)) << golden << " is missing; run with CLOUDFIT_UPDATE_GOLDEN=1";
  EXPECT_EQ(r.out, cloudfit::testing::ReadWholeFile(golden)) << "output of " << name << " changed";
}

TEST(CliGoldenTest, InstancesTable) { ExpectGolden("instances_table", {"instances"}); }

TEST(CliGoldenTest, InstancesFilteredJson) {
  ExpectGolden("instances_gpu_json",
               {"instances", "--gpu", "A100,a100 80g", "--pricing", "spot", "--json"});
}

TEST(CliGoldenTest, InstancesCsvInCny) {
  ExpectGolden("instances_csv_cny",
               {"instances", "--gpu-only", "--currency", "CNY", "--top", "3", "--csv"});
}

TEST(CliGoldenTest, InstancesMarkdownSortedByMemoryPerVcpu) {
  ExpectGolden("instances_markdown",
               {"instances", "--sort", "memory-per-vcpu", "--desc", "--markdown"});
}

TEST(CliGoldenTest, GpusTableAndDetail) {
  ExpectGolden("gpus_table", {"gpus", "--sort", "bf16"});
  ExpectGolden("gpus_detail", {"gpus", "a100 80g"});
}

TEST(CliGoldenTest, ModelsAndCatalogInfo) {
  ExpectGolden("models_table", {"models"});
  ExpectGolden("catalog_info", {"catalog", "info"});
}

TEST(CliGoldenTest, EstimateTrainingAndServing) {
  ExpectGolden("estimate_resnet_train",
               {"estimate", "--kind", "train", "--model", "ResNet-50", "--gpu", "A100-80GB",
                "--gpus", "8", "--precision", "fp16", "--micro-batch", "256", "--epochs", "90",
                "--dataset-samples", "1281167", "--explain"});
  ExpectGolden("estimate_llama_serve_json",
               {"estimate", "--kind", "serve", "--model", "Llama-3.1-8B", "--gpu", "L4",
                "--request-rate", "5", "--ttft-target-ms", "800", "--json"});
}

TEST(CliTest, EstimateJsonLinesBatch) {
  fs::path dir = fs::temp_directory_path() / ("cloudfit-jsonl-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "cases.jsonl")
      << R"({"id": "a", "kind": "inference", "model": "Llama-3.1-8B", "gpu": "L4"})"
      << "\n"
      << "\n"
      << R"({"id": "b", "kind": "train", "model": "ResNet-50", "gpu": "A100", "gpus": 2})"
      << "\n"
      << R"({"id": "c", "kind": "train", "model": "ResNet-50", "gpu": "A100", "batch": -1})"
      << "\n"
      << "not json\n";
  Result r = RunCloudfit({"estimate", "--jsonl", (dir / "cases.jsonl").string()});
  fs::remove_all(dir);
  EXPECT_EQ(r.exit_code, 2) << "a failed case makes the run fail";
  std::istringstream lines(r.out);
  std::vector<std::string> out;
  for (std::string line; std::getline(lines, line);) out.push_back(line);
  ASSERT_EQ(out.size(), 4u) << r.out;
  EXPECT_NE(out[0].find(R"("id":"a","ok":true)"), std::string::npos) << out[0];
  EXPECT_NE(out[1].find(R"("ok":true)"), std::string::npos) << out[1];
  EXPECT_NE(out[2].find("batch: '-1' is not allowed"), std::string::npos) << out[2];
  EXPECT_NE(out[3].find("malformed JSON"), std::string::npos) << out[3];
  EXPECT_NE(r.err.find("2 case(s) failed"), std::string::npos) << r.err;
}

TEST(CliGoldenTest, RecommendOnTheFixtureCatalog) {
  ExpectGolden("recommend_resnet",
               {"recommend", "--kind", "train", "--model", "ResNet-50", "--precision", "fp16",
                "--epochs", "10", "--dataset-samples", "1281167", "--batch", "256"});
  ExpectGolden("recommend_llama_json",
               {"recommend", "--kind", "inference", "--model", "Llama-3.1-8B", "--samples", "10000",
                "--top", "2", "--json"});
  ExpectGolden("explain_lora", {"explain", "--kind", "lora", "--model", "Llama-3.1-8B"});
}

TEST(CliTest, RecommendPlotWhyNotAndJsonLines) {
  fs::path dir = fs::temp_directory_path() / ("cloudfit-rec-" + std::to_string(getpid()));
  fs::create_directories(dir);
  Result r = RunCloudfit({"recommend", "--kind", "inference", "--model", "Llama-3.1-8B",
                          "--samples", "10000", "--plot", (dir / "front.svg").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(cloudfit::testing::ReadWholeFile(dir / "front.svg").find("chosen: "),
            std::string::npos);
  Result why = RunCloudfit({"recommend", "--kind", "train", "--model", "Llama-3.1-8B", "--tokens",
                            "1e8", "--why-not", "g5.xlarge"});
  ASSERT_EQ(why.exit_code, 0) << why.err;
  EXPECT_NE(why.out.find("does not fit in memory"), std::string::npos) << why.out;
  std::ofstream(dir / "requests.jsonl")
      << R"({"id": 1, "kind": "inference", "model": "Llama-3.1-8B", "samples": 100, "top": 1})"
      << "\n"
      << R"({"id": 2, "kind": "train", "model": "ResNet-50", "epochs": 1,)"
      << R"( "dataset_samples": 1281167, "deadline_hours": 0.0001})"
      << "\n"
      << R"({"id": 3, "kind": "serve", "model": "nope"})"
      << "\n";
  Result batch = RunCloudfit({"recommend", "--jsonl", (dir / "requests.jsonl").string()});
  fs::remove_all(dir);
  EXPECT_EQ(batch.exit_code, 2);
  std::istringstream lines(batch.out);
  std::vector<std::string> out;
  for (std::string line; std::getline(lines, line);) out.push_back(line);
  ASSERT_EQ(out.size(), 3u) << batch.out;
  EXPECT_NE(out[0].find(R"("ok":true)"), std::string::npos);
  EXPECT_NE(out[1].find(R"("feasible":0)"), std::string::npos) << out[1];
  EXPECT_NE(out[2].find("unknown model 'nope'"), std::string::npos) << out[2];
}

// Bad input: a clear message naming what is wrong, exit code 2, nothing on stdout.
TEST(CliErrorsTest, BadInputExitsTwoWithAClearMessage) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  } cases[] = {
      {{"instances", "--gpu", "H1000"}, "--gpu: unknown GPU 'H1000'"},
      {{"instances", "--vcpus-min", "abc"}, "--vcpus-min"},
      {{"instances", "--vcpus-min", "16", "--vcpus-max", "8"}, "--vcpus: the minimum 16"},
      {{"instances", "--price-max", "-5"}, "--price: -5 is outside"},
      {{"instances", "--pricing", "hourly"}, "--pricing: 'hourly' is not one of"},
      {{"instances", "--provider", "awz"}, "--provider: unknown value 'awz'; did you mean 'aws'"},
      {{"instances", "--json", "--csv"}, "excludes"},
      {{"instances", "--no-such-flag"}, "no-such-flag"},
      {{"gpus", "Voodoo5"}, "unknown GPU 'Voodoo5'"},
      {{"models", "Llama-9-1T"}, "unknown model 'Llama-9-1T'"},
      {{"catalog", "import", "--out", "x", "/nonexistent/vms.csv", "--cloud", "aws"},
       "/nonexistent/vms.csv: cannot open"},
      {{"estimate", "--kind", "train", "--model", "ResNet-50", "--gpu", "A100", "--batch", "-8"},
       "batch: '-8' is not allowed"},
      {{"estimate", "--kind", "train", "--model", "Llama-9-1T", "--gpu", "A100"},
       "model: unknown model 'Llama-9-1T'"},
      {{"estimate", "--kind", "train", "--model", "ResNet-50", "--instance", "p4d.24xlarge",
        "--gpus", "3"},
       "--gpus: p4d.24xlarge has 8 GPUs, not 3"},
      {{"estimate", "--kind", "train", "--model", "ResNet-50"}, "--gpu or --instance"},
      {{"estimate", "--set", "colour=blue"}, "unknown workload field 'colour'"},
      {{"estimate", "--file", "/nonexistent.yaml"}, "/nonexistent.yaml"},
      {{"recommend", "--kind", "train", "--model", "ResNet-50", "--objective", "prettiest"},
       "--objective: 'prettiest' is not one of"},
      {{"recommend", "--kind", "train", "--model", "ResNet-50", "--pricing", "free"},
       "--pricing: 'free' is not one of"},
      {{"recommend", "--kind", "train", "--model", "ResNet-50", "--provider", "awz"},
       "did you mean 'aws'"},
      {{"recommend", "--kind", "train", "--model", "ResNet-50", "--budget", "-3"},
       "--budget: '-3' is not allowed; a number in"},
      {{"recommend", "--kind", "train", "--model", "ResNet-50"},
       "a recommendation ranks whole jobs, so it needs the job's size"},
      {{"recommend", "--kind", "train", "--model", "ResNet-50", "--epochs", "2"},
       "epochs: need the data set's size"},
      {{"frobnicate"}, "unknown command 'frobnicate'"},
      {{"instancs"}, "did you mean 'instances'"},
  };
  for (const Case& c : cases) {
    Result r = RunCloudfit(c.args);
    std::string joined;
    for (const std::string& a : c.args) joined += a + " ";
    EXPECT_EQ(r.exit_code, 2) << joined << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << joined << "\nstderr: " << r.err;
    EXPECT_EQ(r.out, "") << joined;
  }
}

TEST(CliErrorsTest, BadCatalogDirectoryNamesFileLineAndField) {
  fs::path dir = fs::temp_directory_path() / ("cloudfit-bad-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::copy(fs::path(CLOUDFIT_SOURCE_DIR) / "tests/fixtures/catalog", dir,
           fs::copy_options::recursive);
  std::ofstream(dir / "instances/aws.csv", std::ios::app)
      << "aws,g9.huge,g9,A10G,1,,4,16,,x86_64,10,0,,us-east-1,-2,,,,USD,https://x,2026-07-22,\n";
  Result r = RunCloudfit({"--catalog", dir.string(), "instances"});
  fs::remove_all(dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("instances/aws.csv:7: field 'ondemand'"), std::string::npos) << r.err;
}

TEST(CliTest, RunsFromAnyDirectoryWithTheBuiltInCatalog) {
  Result r = RunCloudfit({"instances", "--gpu", "H100-SXM", "--top", "3", "--json"}, false);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"H100-SXM5-80GB\""), std::string::npos) << r.out;
  Result info = RunCloudfit({"catalog", "info"}, false);
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("catalog: built-in"), std::string::npos);
}

TEST(CliTest, ImportThenUseTheImportedCatalog) {
  fs::path dir = fs::temp_directory_path() / ("cloudfit-import-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "lambda");
  std::ofstream(dir / "lambda/vms.csv")
      << "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,"
         "SpotPrice\n"
         "gpu_1x_l4,L4,1,8,32,0.5,us-east-1,,\n"
         "gpu_1x_l4,L4,1,8,32,0.5,us-west-1,,\n";
  std::string out = (dir / "catalog").string();
  Result r = RunCloudfit({"catalog", "import", "--input-format", "skypilot", "--as-of",
                          "2026-11-01", "--out", out, (dir / "lambda/vms.csv").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("2 rows read, 2 used"), std::string::npos) << r.out;
  Result q = RunCloudfit({"--catalog", out, "instances", "--provider", "lambda", "--csv"});
  fs::remove_all(dir);
  ASSERT_EQ(q.exit_code, 0) << q.err;
  EXPECT_NE(q.out.find("lambda,gpu_1x_l4,us-east-1,L4,1,24,8,32,0.5,USD,2026-11-01"),
            std::string::npos)
      << q.out;
}

}  // namespace

// Each class of bad catalog data fails with file:line, the field and the reason.
#include <gtest/gtest.h>

#include "cloudfit/calibration.h"
#include "cloudfit/catalog.h"
#include "test_support.h"

namespace cloudfit {
namespace {

const char* kHeader =
    "provider,instance_type,family,gpu_model,gpu_count,gpu_memory_gib,vcpus,memory_gib,cpu,arch,"
    "network_gbps,local_disk_gb,local_disk_type,region,ondemand,spot,reserved_1y,reserved_3y,"
    "currency,source,as_of,notes\n";
const char* kGoodRow =
    "aws,g5.xlarge,g5,A10G,1,,4,16,,x86_64,10,250,nvme,us-east-1,1.006,,,,USD,https://x,"
    "2026-07-22,\n";

// Loads the fixture with instances/aws.csv replaced by `rows`; returns the error message.
std::string LoadWithAwsRows(const std::string& rows) {
  CatalogFiles files = testing::FixtureFiles();
  files["instances/aws.csv"] = std::string(kHeader) + rows;
  Catalog catalog;
  Status s = Catalog::FromFiles(files, "fixture", &catalog);
  return s.ok() ? "" : s.message();
}

void ExpectError(const std::string& message, const std::string& where, const std::string& field,
                 const std::string& reason) {
  EXPECT_NE(message.find(where), std::string::npos) << message;
  EXPECT_NE(message.find("field '" + field + "'"), std::string::npos) << message;
  EXPECT_NE(message.find(reason), std::string::npos) << message;
}

TEST(LoaderErrorsTest, GoodRowLoads) { EXPECT_EQ(LoadWithAwsRows(kGoodRow), ""); }

TEST(LoaderErrorsTest, MissingField) {
  ExpectError(LoadWithAwsRows("aws,g5.xlarge,g5,A10G,1,,,16,,x86_64,10,250,nvme,us-east-1,1,,,,"
                              "USD,https://x,2026-07-22,\n"),
              "fixture/instances/aws.csv:2", "vcpus", "missing value");
}

TEST(LoaderErrorsTest, NegativePrice) {
  ExpectError(LoadWithAwsRows("aws,g5.xlarge,g5,A10G,1,,4,16,,x86_64,10,250,nvme,us-east-1,-1,,,,"
                              "USD,https://x,2026-07-22,\n"),
              "aws.csv:2", "ondemand", "a price must be above 0");
}

TEST(LoaderErrorsTest, ZeroPriceIsNotUnknown) {
  ExpectError(LoadWithAwsRows("aws,g5.xlarge,g5,A10G,1,,4,16,,x86_64,10,250,nvme,us-east-1,0,,,,"
                              "USD,https://x,2026-07-22,\n"),
              "aws.csv:2", "ondemand", "unknown price is left empty");
}

TEST(LoaderErrorsTest, NonNumericPrice) {
  ExpectError(LoadWithAwsRows("aws,g5.xlarge,g5,A10G,1,,4,16,,x86_64,10,250,nvme,us-east-1,1.0,"
                              "cheap,,,USD,https://x,2026-07-22,\n"),
              "aws.csv:2", "spot", "'cheap' is not a number");
}

TEST(LoaderErrorsTest, UnknownGpu) {
  ExpectError(LoadWithAwsRows("aws,g5.xlarge,g5,A10X,1,,4,16,,x86_64,10,250,nvme,us-east-1,1,,,,"
                              "USD,https://x,2026-07-22,\n"),
              "aws.csv:2", "gpu_model", "unknown GPU 'A10X'; did you mean");
}

TEST(LoaderErrorsTest, DuplicateKey) {
  ExpectError(LoadWithAwsRows(std::string(kGoodRow) + kGoodRow), "aws.csv:3", "region",
              "duplicate row for g5.xlarge in us-east-1 (first at line 2)");
}

// A type with more regions than the loader scans one by one (it hashes them beyond 32).
TEST(LoaderErrorsTest, DuplicateKeyAmongManyRegions) {
  std::string rows;
  for (int i = 0; i < 40; ++i) {
    rows += "aws,g5.xlarge,g5,A10G,1,,4,16,,x86_64,10,250,nvme,region-" + std::to_string(i) +
            ",1.006,,,,USD,https://x,2026-07-22,\n";
  }
  EXPECT_EQ(LoadWithAwsRows(rows), "");
  for (int again : {3, 35}) {
    std::string duplicate = "aws,g5.xlarge,g5,A10G,1,,4,16,,x86_64,10,250,nvme,region-" +
                            std::to_string(again) + ",1.006,,,,USD,https://x,2026-07-22,\n";
    ExpectError(LoadWithAwsRows(rows + duplicate), "aws.csv:42", "region",
                "duplicate row for g5.xlarge in region-" + std::to_string(again) +
                    " (first at line " + std::to_string(again + 2) + ")");
  }
}

TEST(LoaderErrorsTest, ShapeDisagreesAcrossRegions) {
  ExpectError(LoadWithAwsRows(std::string(kGoodRow) +
                              "aws,g5.xlarge,g5,A10G,1,,8,16,,x86_64,10,250,nvme,eu-west-1,1.2,,,,"
                              "USD,https://x,2026-07-22,\n"),
              "aws.csv:3", "instance_type", "differs from its row at line 2");
}

TEST(LoaderErrorsTest, BadDateAndUnknownCurrency) {
  ExpectError(LoadWithAwsRows("aws,g5.xlarge,g5,A10G,1,,4,16,,x86_64,10,250,nvme,us-east-1,1,,,,"
                              "USD,https://x,2026-13-01,\n"),
              "aws.csv:2", "as_of", "not a YYYY-MM-DD date");
  ExpectError(LoadWithAwsRows("aws,g5.xlarge,g5,A10G,1,,4,16,,x86_64,10,250,nvme,us-east-1,1,,,,"
                              "XYZ,https://x,2026-07-22,\n"),
              "aws.csv:2", "currency", "'XYZ' has no rate");
}

TEST(LoaderErrorsTest, WrongProviderInFile) {
  ExpectError(LoadWithAwsRows("gcp,g5.xlarge,g5,A10G,1,,4,16,,x86_64,10,250,nvme,us-east-1,1,,,,"
                              "USD,https://x,2026-07-22,\n"),
              "aws.csv:2", "provider", "'gcp' in the file for provider 'aws'");
}

TEST(LoaderErrorsTest, MissingColumnAndWrongFieldCount) {
  CatalogFiles files = testing::FixtureFiles();
  files["instances/aws.csv"] = "provider,instance_type\naws,x\n";
  Catalog catalog;
  Status s = Catalog::FromFiles(files, "fixture", &catalog);
  EXPECT_NE(s.message().find("aws.csv:1: missing column 'family'"), std::string::npos)
      << s.message();
  files["instances/aws.csv"] = std::string(kHeader) + "aws,g5.xlarge\n";
  s = Catalog::FromFiles(files, "fixture", &catalog);
  EXPECT_NE(s.message().find("aws.csv:2: expected 22 fields"), std::string::npos) << s.message();
}

TEST(LoaderErrorsTest, AcceleratorAliasCollision) {
  CatalogFiles files = testing::FixtureFiles();
  files["accelerators.csv"] +=
      "A100-CLONE,NVIDIA,a100,Ampere,8.0,SXM,40,HBM2,1555,19.5,,,,,,0,4,400,0,0,no,no,2020,"
      "https://x,2026-11-22,\n";
  Catalog catalog;
  Status s = Catalog::FromFiles(files, "fixture", &catalog);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'a100' of accelerator 'A100-CLONE' already names 'A100-SXM4-40GB'"),
            std::string::npos)
      << s.message();
}

TEST(LoaderErrorsTest, MissingFileIsNamed) {
  CatalogFiles files = testing::FixtureFiles();
  files.erase("cpus.csv");
  Catalog catalog;
  Status s = Catalog::FromFiles(files, "fixture", &catalog);
  EXPECT_EQ(s.message(), "fixture: the catalog has no cpus.csv");
}

TEST(LoaderErrorsTest, InterconnectIsOptionalButMustBeKnown) {
  // Files without the column load (catalogs written before it existed); a value outside the
  // list is an error naming it.
  CatalogFiles files = testing::FixtureFiles();
  files["instances/aws.csv"] =
      std::string(kHeader).replace(std::string(kHeader).find("network_gbps,"), 13,
                                   "network_gbps,interconnect,") +
      "aws,p4d.24xlarge,p4d,A100-SXM4-40GB,8,,96,1152,,x86_64,400,EFA,8000,nvme,us-east-1,"
      "32.77,,,,USD,https://x,2026-07-22,\n";
  Catalog catalog;
  ASSERT_TRUE(Catalog::FromFiles(files, "fixture", &catalog).ok());
  const InstanceType* t = nullptr;
  ASSERT_TRUE(catalog.FindInstance("p4d.24xlarge", &t).ok());
  EXPECT_EQ(t->interconnect, Interconnect::kEfa);

  files["instances/aws.csv"] =
      std::string(kHeader).replace(std::string(kHeader).find("network_gbps,"), 13,
                                   "network_gbps,interconnect,") +
      "aws,g5.xlarge,g5,A10G,1,,4,16,,x86_64,10,nvlink,250,nvme,us-east-1,"
      "1.006,,,,USD,https://x,2026-07-22,\n";
  Status s = Catalog::FromFiles(files, "fixture", &catalog);
  ASSERT_FALSE(s.ok());
  ExpectError(s.message(), "fixture/instances/aws.csv:2", "interconnect", "'nvlink' is not one of");
}

TEST(LoaderErrorsTest, UnknownPriceStaysUnknown) {
  Catalog catalog = testing::FixtureCatalog();
  const InstanceType* t = nullptr;
  ASSERT_TRUE(catalog.FindInstance("ecs.gn6i-c4g1.xlarge", &t).ok());
  ASSERT_EQ(t->regions.size(), 1u);
  EXPECT_FALSE(t->regions[0].any_price());
}

// Calibration tables are data too: a GPU count or a sequence length beyond any integer type is a
// skipped row with its reason, never an exception out of std::stoi/std::stod.
TEST(LoaderErrorsTest, CalibrationCountsBeyondIntAreSkippedNotThrown) {
  testing::TempDir dir;
  dir.Write("train_throughput.csv",
            "source,model,task,precision,batch_size_per_gpu,gpu,num_gpus,metric,value,unit,notes\n"
            "s,BERT-base uncased,\"fine-tune, seq_len " +
                std::string(400, '9') +
                "\",fp16_mixed,192,A100 80GB,1,train_throughput,146,sequences/s,\n");
  dir.Write("llm_memory_and_speed.csv",
            "source,model,params_b,method,precision,seq_len,batch,gpu,metric,value,unit,notes\n"
            "s,Llama-3-8B,8.03,inference llama.cpp (llama-bench),GGUF Q4_K_M,512,1,"
            "99999999999x RTX 3090 24GB,decode_tokens_per_s,115.42,tokens/s,\n");
  Catalog catalog = testing::FixtureCatalog();
  std::vector<CalibrationCase> cases;
  std::vector<SkippedRow> skipped;
  ASSERT_TRUE(LoadCalibrationCases(catalog, dir.path(), &cases, &skipped).ok());
  ASSERT_EQ(cases.size() + skipped.size(), 2u);
  bool gpu_skipped = false;
  for (const SkippedRow& s : skipped) {
    if (s.reason.find("is not '<N>x <GPU>'") != std::string::npos) gpu_skipped = true;
  }
  EXPECT_TRUE(gpu_skipped) << "a GPU count beyond 2^20 is not a count";
  for (const CalibrationCase& c : cases) EXPECT_GT(c.throughput_scale, 0) << c.id;
}

}  // namespace
}  // namespace cloudfit

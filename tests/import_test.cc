// Importing SkyPilot catalog CSVs and user price lists, and writing catalogs atomically.
#include <filesystem>

#include <gtest/gtest.h>

#include "cloudfit/catalog_import.h"
#include "util/date.h"
#include "util/file.h"
#include "test_support.h"

namespace cloudfit {
namespace {

const char* kAwsCsv =
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,"
    "AvailabilityZone,Arch\n"
    // Two zones of one region: one offer, spot is the lower.
    "g5.xlarge,A10G,1.0,4.0,16.0,\"{'Gpus': [{'Name': 'A10G', 'Count': 1, 'MemoryInfo': "
    "{'SizeInMiB': 22888}}], 'TotalGpuMemoryInMiB': 22888}\",1.006,0.45,us-east-1,use1-az1,x86_64\n"
    "g5.xlarge,A10G,1.0,4.0,16.0,,1.006,0.41,us-east-1,use1-az2,x86_64\n"
    // A new region for an existing type.
    "g5.xlarge,A10G,1.0,4.0,16.0,,1.2,,eu-west-1,euw1-az1,x86_64\n"
    // A new type.
    "g6.xlarge,L4,1,4,16,,0.805,0.3,us-east-1,use1-az1,x86_64\n"
    // Unusable rows, each with its own reason.
    "inf2.xlarge,Inferentia2,1,4,16,,0.76,,us-east-1,use1-az1,x86_64\n"
    "x9.gpu,SuperGPU,1,4,16,,1.0,,us-east-1,use1-az1,x86_64\n"
    "g5.2xlarge,A10G,1,8,32,,,,us-east-1,use1-az1,x86_64\n"
    "g5.4xlarge,A10G,1,16,64,,1.6,,,,x86_64\n";

const char* kGcpCsv =
    "InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,"
    "AvailabilityZone,Price,SpotPrice\n"
    "a2-ultragpu-1g,12.0,170.0,,,,us-central1,us-central1-a,1.0,0.4\n"
    "a2-ultragpu-1g,12.0,170.0,,,,us-central1,us-central1-a,1.0,0.4\n"
    "a2-ultragpu-2g,24.0,340.0,,,,europe-west4,europe-west4-a,2.0,0.8\n"
    ",,,A100-80GB,1,A100-80GB,us-central1,us-central1-a,4.0,1.6\n"
    ",,,T4,1,T4,us-central1,us-central1-a,0.35,0.1\n"
    ",,,tpu-v6e-1,1,tpu-v6e-1,asia-east1,asia-east1-c,700.0,700.0\n"
    "n1-highmem-8,8.0,52.0,,,,us-central2,us-central2-b,700.0,0.1\n";

class ImportTest : public ::testing::Test {
 protected:
  Catalog base_ = testing::FixtureCatalog();
  testing::TempDir dir_;
};

TEST_F(ImportTest, SkyPilotAwsMergesZonesAndCountsEverySkippedRow) {
  std::string path = dir_.Write("aws/vms.csv", kAwsCsv);
  CatalogFiles files;
  ImportReport report;
  SkyPilotImportOptions options;
  options.as_of = "2026-11-01";
  Status s = ImportSkyPilot(base_, {path}, options, &files, &report);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(report.files.size(), 1u);
  const FileImportReport& f = report.files[0];
  EXPECT_EQ(f.provider, "aws");
  EXPECT_EQ(f.rows_read, 8);
  EXPECT_EQ(f.rows_used, 4);
  EXPECT_EQ(f.skipped.at("not a GPU (Inferentia2)"), 1);
  EXPECT_EQ(f.skipped.at("unknown GPU 'SuperGPU'"), 1);
  EXPECT_EQ(f.skipped.at("missing or non-numeric price"), 1);
  EXPECT_EQ(f.skipped.at("missing region"), 1);
  int skipped = 0;
  for (const auto& [reason, count] : f.skipped) skipped += count;
  int merged = 0;
  for (const auto& [reason, count] : f.merged) merged += count;
  EXPECT_EQ(f.rows_used + skipped, f.rows_read) << "no row disappears without a reason";
  EXPECT_EQ(merged, 1);
  EXPECT_EQ(report.types_added, 1);    // g6.xlarge
  EXPECT_EQ(report.types_updated, 1);  // g5.xlarge
  EXPECT_EQ(report.offers_added, 2);   // g5.xlarge eu-west-1, g6.xlarge us-east-1
  EXPECT_EQ(report.offers_updated, 1);

  Catalog merged_catalog;
  ASSERT_TRUE(Catalog::FromFiles(files, "merged", &merged_catalog).ok());
  const InstanceType* g5 = nullptr;
  ASSERT_TRUE(merged_catalog.FindInstance("g5.xlarge", &g5).ok());
  ASSERT_EQ(g5->regions.size(), 3u);  // us-east-1, ap-northeast-1 (kept), eu-west-1 (added)
  const RegionPrice* east = g5->FindRegion("us-east-1");
  ASSERT_NE(east, nullptr);
  EXPECT_DOUBLE_EQ(*east->price(PricingMode::kSpot), 0.41);
  EXPECT_EQ(FormatIsoDate(east->as_of_days), "2026-11-01");
  EXPECT_NE(g5->FindRegion("ap-northeast-1"), nullptr) << "regions the import lacks are kept";
  const InstanceType* g6 = nullptr;
  ASSERT_TRUE(merged_catalog.FindInstance("g6.xlarge", &g6).ok());
  EXPECT_EQ(g6->gpu->name, "L4");
  EXPECT_EQ(g6->family, "g6");
}

TEST_F(ImportTest, GcpAddsTheAttachedGpuPriceToHostRows) {
  std::string path = dir_.Write("gcp/vms.csv", kGcpCsv);
  CatalogFiles files;
  ImportReport report;
  ASSERT_TRUE(ImportSkyPilot(base_, {path}, {}, &files, &report).ok());
  const FileImportReport& f = report.files[0];
  EXPECT_EQ(f.skipped.at("placeholder price 700.0 (not offered)"), 1);
  EXPECT_EQ(f.skipped.at("not a GPU (tpu-v6e-1)"), 1);
  EXPECT_EQ(f.skipped.at("GCP attachable GPU row not bundled with a host (N1 + GPU combinations "
                         "are not generated)"),
            1);  // the T4 row
  EXPECT_EQ(f.skipped.at("GCP host-only price: the attached A100-80GB price for its zone is not "
                         "in the file"),
            1);  // a2-ultragpu-2g in europe-west4
  Catalog merged;
  ASSERT_TRUE(Catalog::FromFiles(files, "merged", &merged).ok());
  const InstanceType* a2 = nullptr;
  ASSERT_TRUE(merged.FindInstance("a2-ultragpu-1g", &a2).ok());
  const RegionPrice* r = a2->FindRegion("us-central1");
  ASSERT_NE(r, nullptr);
  EXPECT_DOUBLE_EQ(*r->price(PricingMode::kOnDemand), 5.0);  // host 1.0 + GPU 4.0
  EXPECT_DOUBLE_EQ(*r->price(PricingMode::kSpot), 2.0);
}

TEST_F(ImportTest, UnknownCloudAndBadDateAreInputErrors) {
  std::string path = dir_.Write("mystery/vms.csv", kAwsCsv);
  CatalogFiles files;
  ImportReport report;
  Status s = ImportSkyPilot(base_, {path}, {}, &files, &report);
  EXPECT_NE(s.message().find("--cloud: cannot tell the cloud"), std::string::npos) << s.message();
  SkyPilotImportOptions options;
  options.cloud = "aws";
  options.as_of = "yesterday";
  s = ImportSkyPilot(base_, {path}, options, &files, &report);
  EXPECT_NE(s.message().find("--as-of"), std::string::npos);
}

TEST_F(ImportTest, PriceListOverridesAndAddsRegions) {
  std::string path = dir_.Write(
      "prices.csv",
      "instance_type,region,pricing_mode,price,currency,as_of\n"
      "ecs.gn6i-c4g1.xlarge,cn-hangzhou,ondemand,8.2,CNY,2026-11-01\n"
      "p4d.24xlarge,us-east-1,reserved_1y,12.0,USD,2026-11-01\n"
      "g5.xlarge,us-west-2,spot,0.35,USD,2026-11-01\n");
  CatalogFiles files;
  ImportReport report;
  Status s = ImportPriceList(base_, {path}, &files, &report);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(report.offers_updated, 2);
  EXPECT_EQ(report.offers_added, 1);
  Catalog merged;
  ASSERT_TRUE(Catalog::FromFiles(files, "merged", &merged).ok());
  const InstanceType* gn6i = nullptr;
  ASSERT_TRUE(merged.FindInstance("ecs.gn6i-c4g1.xlarge", &gn6i).ok());
  EXPECT_DOUBLE_EQ(*gn6i->regions[0].price(PricingMode::kOnDemand), 8.2);
  EXPECT_EQ(gn6i->regions[0].currency, "CNY");
  const InstanceType* p4d = nullptr;
  ASSERT_TRUE(merged.FindInstance("p4d.24xlarge", &p4d).ok());
  EXPECT_DOUBLE_EQ(*p4d->FindRegion("us-east-1")->price(PricingMode::kReserved1y), 12.0);
  EXPECT_DOUBLE_EQ(*p4d->FindRegion("us-east-1")->price(PricingMode::kOnDemand), 21.96);
}

TEST_F(ImportTest, PriceListErrorsNameFileLineAndField) {
  std::string path = dir_.Write("bad.csv",
                                "instance_type,region,pricing_mode,price,currency,as_of\n"
                                "g5.xlarge,us-east-1,hourly,1.0,USD,2026-11-01\n");
  CatalogFiles files;
  ImportReport report;
  Status s = ImportPriceList(base_, {path}, &files, &report);
  EXPECT_NE(s.message().find("bad.csv:2: field 'pricing_mode'"), std::string::npos)
      << s.message();
  path = dir_.Write("bad2.csv",
                    "instance_type,region,pricing_mode,price,currency,as_of\n"
                    "g5.xlarg,us-east-1,spot,1.0,USD,2026-11-01\n");
  s = ImportPriceList(base_, {path}, &files, &report);
  EXPECT_NE(s.message().find("bad2.csv:2: field 'instance_type': unknown instance type "
                             "'g5.xlarg'; did you mean 'g5.xlarge'"),
            std::string::npos)
      << s.message();
}

TEST_F(ImportTest, AtomicWriteReplacesWholeDirectoryOrNothing) {
  std::string out = dir_.path() + "/catalog";
  ASSERT_TRUE(WriteDirectoryAtomically(out, {{"a.csv", "1"}, {"sub/b.csv", "2"}}).ok());
  ASSERT_TRUE(WriteDirectoryAtomically(out, {{"a.csv", "3"}}).ok());
  std::string contents;
  ASSERT_TRUE(ReadFile(out + "/a.csv", &contents).ok());
  EXPECT_EQ(contents, "3");
  EXPECT_FALSE(std::filesystem::exists(out + "/sub/b.csv")) << "the old directory is gone whole";
  // A file where the directory should go: the write fails and the file is untouched.
  std::string blocker = dir_.Write("blocker", "keep");
  EXPECT_FALSE(WriteDirectoryAtomically(blocker, {{"a.csv", "x"}}).ok());
  ASSERT_TRUE(ReadFile(blocker, &contents).ok());
  EXPECT_EQ(contents, "keep");
  // A path that cannot be a directory: nothing is left behind beside it.
  EXPECT_FALSE(WriteDirectoryAtomically(blocker + "/inner", {{"a.csv", "x"}}).ok());
}

TEST_F(ImportTest, FormatInstancesCsvRoundTrips) {
  std::vector<InstanceType> types;
  for (const InstanceType& t : base_.instances()) types.push_back(t);
  CatalogFiles files = testing::FixtureFiles();
  for (auto it = files.begin(); it != files.end();) {
    it = it->first.rfind("instances/", 0) == 0 ? files.erase(it) : std::next(it);
  }
  std::map<std::string, std::vector<InstanceType>> by_provider;
  for (const InstanceType& t : types) by_provider[t.provider].push_back(t);
  for (const auto& [provider, list] : by_provider) {
    files["instances/" + provider + ".csv"] = FormatInstancesCsv(list);
  }
  Catalog reloaded;
  Status s = Catalog::FromFiles(files, "round trip", &reloaded);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(reloaded.instances().size(), base_.instances().size());
  for (const InstanceType& t : base_.instances()) {
    const InstanceType* r = nullptr;
    ASSERT_TRUE(reloaded.FindInstance(t.name, &r).ok());
    EXPECT_EQ(r->gpu_memory_bytes, t.gpu_memory_bytes) << t.name;
    EXPECT_EQ(r->vcpus, t.vcpus);
    EXPECT_EQ(r->regions.size(), t.regions.size());
    for (size_t i = 0; i < t.regions.size(); ++i) {
      EXPECT_EQ(r->regions[i].per_hour, t.regions[i].per_hour) << t.name;
    }
  }
}

}  // namespace
}  // namespace cloudfit

namespace cloudfit {
namespace {

// SkyPilot names GPUs loosely ("A100" for the 40 and 80 GB parts, "H100" for SXM, PCIe and
// NVL): the importer picks the variant by memory and the form factor in the type's name.
class ImportGpuMatchTest : public ::testing::Test {
 protected:
  const FileImportReport& Import(const std::string& csv) {
    std::string path = dir_.Write("lambda/vms.csv", csv);
    CatalogFiles files;
    report_ = ImportReport();
    Status s = ImportSkyPilot(testing::BuiltInCatalog(), {path}, options_, &files, &report_);
    EXPECT_TRUE(s.ok()) << s.ToString();
    merged_ = Catalog();
    EXPECT_TRUE(Catalog::FromFiles(files, "merged", &merged_).ok());
    return report_.files.at(0);
  }
  std::string GpuOf(const std::string& type) {
    const InstanceType* t = nullptr;
    EXPECT_TRUE(merged_.FindInstance(type, &t).ok()) << type;
    return t && t->gpu ? t->gpu->name : "";
  }
  static std::string Row(const std::string& type, const std::string& gpu, int count, double mib) {
    std::string info = mib > 0 ? "\"{'Gpus': [{'Name': '" + gpu + "', 'Manufacturer': 'NVIDIA', "
                                     "'Count': " + std::to_string(count) +
                                     ", 'MemoryInfo': {'SizeInMiB': " + std::to_string(mib) +
                                     "}}]}\""
                               : "";
    return type + "," + gpu + "," + std::to_string(count) + ",30,200,1.29,us-east-1," + info +
           ",\n";
  }
  const char* kHeader =
      "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,"
      "SpotPrice\n";
  testing::TempDir dir_;
  SkyPilotImportOptions options_;
  ImportReport report_;
  Catalog merged_;
};

TEST_F(ImportGpuMatchTest, MemoryPicksThe80GbPartAndTheNamePicksPcieOrNvl) {
  const FileImportReport& f =
      Import(std::string(kHeader) + Row("gpu_8x_a100_80gb_sxm4_new", "A100", 8, 81920) +
             Row("gpu_1x_h100_pcie_new", "H100", 1, 81559) +
             Row("gpu_1x_h100_nvl_new", "H100", 1, 95830) +
             Row("gpu_1x_h100_sxm5_new", "H100", 1, 81559));
  EXPECT_EQ(GpuOf("gpu_8x_a100_80gb_sxm4_new"), "A100-SXM4-80GB") << "an 80 GB A100 is not the 40 GB part";
  EXPECT_EQ(GpuOf("gpu_1x_h100_pcie_new"), "H100-PCIE-80GB");
  EXPECT_EQ(GpuOf("gpu_1x_h100_nvl_new"), "H100-NVL-94GB") << "an H100 NVL is not an SXM";
  EXPECT_EQ(GpuOf("gpu_1x_h100_sxm5_new"), "H100-SXM5-80GB");
  EXPECT_TRUE(f.guessed.empty()) << f.guessed.begin()->first;
}

TEST_F(ImportGpuMatchTest, EveryGuessIsReported) {
  const FileImportReport& f = Import(std::string(kHeader) + Row("gpu_2x_a100_new", "A100", 2, 0));
  ASSERT_EQ(f.guessed.size(), 1u);
  const std::string& what = f.guessed.begin()->first;
  EXPECT_NE(what.find("gpu_2x_a100_new"), std::string::npos) << what;
  EXPECT_NE(what.find("could also be"), std::string::npos) << what;
  EXPECT_NE(what.find("A100-PCIE-40GB"), std::string::npos) << what;
  EXPECT_EQ(f.guessed.begin()->second, 1);
}

TEST_F(ImportGpuMatchTest, AKnownTypeKeepsTheCatalogsGpuAndTheDisagreementIsReported) {
  // The catalog says gpu_1x_a100 is the PCIe part; SkyPilot's "A100" alone suggests SXM4.
  const FileImportReport& f = Import(std::string(kHeader) + Row("gpu_1x_a100", "A100", 1, 40960));
  EXPECT_EQ(GpuOf("gpu_1x_a100"), "A100-PCIE-40GB");
  ASSERT_EQ(f.guessed.size(), 1u);
  EXPECT_NE(f.guessed.begin()->first.find("kept the catalog's"), std::string::npos);
}

}  // namespace
}  // namespace cloudfit

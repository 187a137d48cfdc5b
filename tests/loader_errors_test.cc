// Each class of bad catalog data fails with file:line, the field and the reason.
#include <gtest/gtest.h>

#include "catalog/loaders.h"
#include "cloudfit/calibration.h"
#include "cloudfit/catalog.h"
#include "cloudfit/serving_engine.h"
#include "test_support.h"
#include "util/csv.h"
#include "util/validate.h"

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

// A value a user's file holds is echoed the way client-facing errors echo values: at most 64
// bytes of clean UTF-8 (util/validate.h, Shown), with the file, the line and the field named.
// 5,000 bytes with an escape sequence, invalid UTF-8 and a control byte in them, no CSV syntax.
const std::string kHostile = "\x1b[31m\xff\xfe" + std::string(5000, 'x') + "\x01";
const std::string kHostileShown = "?[31m??" + std::string(64 - 7, 'x') + "...";

TEST(LoaderErrorsTest, AHostileValueIsShownClippedAndClean) {
  std::string row = kGoodRow;
  row.replace(row.find("x86_64"), 6, kHostile);
  EXPECT_EQ(LoadWithAwsRows(row), "fixture/instances/aws.csv:2: field 'arch': '" + kHostileShown +
                                      "' is not x86_64 or arm64");
  // A name longer than any name may be is refused as a name, shown the same way.
  row = kGoodRow;
  row.replace(row.find("g5.xlarge"), 9, kHostile);
  EXPECT_EQ(LoadWithAwsRows(row), "fixture/instances/aws.csv:2: field 'instance_type': '" +
                                      kHostileShown +
                                      "' is not allowed; a name of at most 256 bytes");
}

// The first data row's line and fields of a catalog file; the line is 0 when it has none.
struct FirstRow {
  int line = 0;
  std::vector<std::string> header;
};

FirstRow FirstDataRow(const std::string& name, const std::string& text) {
  CsvTable table;
  FirstRow out;
  if (!ParseCsv(text, name, CsvOptions(), &table).ok() || table.rows.empty()) return out;
  out.line = table.rows[0].line;
  out.header = table.header;
  return out;
}

// `text` with field `column` of the row at `line` replaced by `value` (rows of our files
// hold no quoted line breaks, so lines are rows).
std::string WithField(const std::string& text, int line, size_t column, const std::string& value) {
  size_t start = 0;
  for (int l = 1; l < line; ++l) start = text.find('\n', start) + 1;
  size_t end = text.find('\n', start);
  std::string row = text.substr(start, end - start);
  // The row alone, under a header of as many plain names, split as the loaders split it.
  std::string header = "c0";
  bool quoted = false;
  for (char c : row) {
    if (c == '"') quoted = !quoted;
    if (c == ',' && !quoted) header += ",c" + std::to_string(header.size());
  }
  CsvOptions options;
  options.allow_comments = false;
  CsvTable table;
  Status parsed = ParseCsv(header + "\n" + row + "\n", "row", options, &table);
  if (!parsed.ok() || table.rows.size() != 1) {
    ADD_FAILURE() << row << ": " << parsed.message();
    return text;
  }
  std::string rebuilt;
  for (size_t i = 0; i < table.rows[0].fields.size(); ++i) {
    if (i > 0) rebuilt += ',';
    rebuilt += i == column ? value : CsvEscape(table.rows[0].fields[i]);
  }
  return text.substr(0, start) + rebuilt + text.substr(end);
}

// Loads `files` as a catalog and reads the tables read on first use; the first error.
std::string LoadEverything(const CatalogFiles& files) {
  Catalog catalog;
  Status s = Catalog::FromFiles(files, "cat", &catalog);
  if (s.ok()) {
    CostTables costs;
    s = ReadCostTables(catalog, &costs);
  }
  if (s.ok()) {
    std::vector<ServingEngineProfile> engines;
    s = LoadServingEngines(catalog, &engines);
  }
  return s.ok() ? "" : s.message();
}

// Every field of every catalog file the loaders read, given the hostile value: whatever the
// loaders say about it names the file and the row's line and shows the value clipped and clean.
TEST(LoaderErrorsTest, EveryFieldOfEveryFileEchoesAHostileValueClippedAndClean) {
  CatalogFiles files = testing::FixtureFiles();
  for (const char* extra : {"efficiency.csv", "video_encoders.csv", "spot.csv",
                            "serving_engines.csv", "costs/egress.csv", "costs/storage.csv",
                            "costs/licences.csv", "costs/billing.csv", "costs/streaming.csv"}) {
    files[extra] = testing::ReadWholeFile(testing::SourcePath(std::string("data/") + extra));
    ASSERT_FALSE(files[extra].empty()) << extra;
  }
  ASSERT_EQ(LoadEverything(files), "");
  int fields = 0, refused = 0, shown = 0;
  for (const auto& [name, text] : files) {
    FirstRow first = FirstDataRow(name, text);
    ASSERT_GT(first.line, 0) << name;
    for (size_t column = 0; column < first.header.size(); ++column) {
      CatalogFiles hostile = files;
      hostile[name] = WithField(text, first.line, column, kHostile);
      std::string message = LoadEverything(hostile);
      ++fields;
      if (message.empty()) continue;  // free text (notes, sources, aliases) is taken as it is
      ++refused;
      SCOPED_TRACE(name + " " + first.header[column] + ": " + Shown(message, 400));
      // A message that shows the value is about this field; one that does not is about what
      // the value led to elsewhere (an alias no longer found, a shape that now differs).
      if (message.find(kHostileShown) != std::string::npos) {
        ++shown;
        EXPECT_NE(message.find(name + ":" + std::to_string(first.line) + ":"), std::string::npos);
        EXPECT_NE(message.find("field '" + first.header[column] + "'"), std::string::npos);
      }
      EXPECT_TRUE(IsValidUtf8(message));
      EXPECT_EQ(Shown(message, message.size()), message) << "no control characters";
      EXPECT_EQ(message.find(std::string(kShownBytes, 'x')), std::string::npos) << "clipped";
      EXPECT_LT(message.size(), 1024u);
    }
  }
  // Most fields are checked values (numbers, names, dates, kinds): the sweep saw them refused.
  EXPECT_GT(fields, 150);
  EXPECT_GT(refused, fields / 2);
  EXPECT_GT(shown, refused / 2);
}

}  // namespace
}  // namespace cloudfit

// Machine output, the terminal table and the flag vocabulary, checked on the real binary with the
// fixture catalog: every --json document against its JSON Schema in docs/schemas/, every --csv
// as a header and rows of plain values, the table narrowed to $COLUMNS, colour only on a
// terminal, deprecated spellings and did-you-mean.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "cli/terminal.h"
#include "cli/vocabulary.h"
#include "cloudfit/table.h"
#include "json_schema_check.h"
#include "test_support.h"
#include "util/csv.h"
#include "util/strings.h"

namespace cloudfit {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs cloudfit on the fixture catalog with `env` (e.g. "COLUMNS=100") and no terminal.
Result RunCli(const std::vector<std::string>& args, const std::string& env = "") {
  fs::path dir = fs::temp_directory_path() / ("cloudfit-out-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string command =
      "cd " + testing::ShellQuote(dir.string()) +
      " && env -u COLUMNS -u NO_COLOR CLOUDFIT_TODAY=2026-11-22 CLOUDFIT_CATALOG=" +
      testing::ShellQuote(std::string(CLOUDFIT_SOURCE_DIR) + "/tests/fixtures/catalog") + " " +
      env + " " + testing::ShellQuote(CLOUDFIT_BINARY);
  for (const std::string& a : args) command += " " + testing::ShellQuote(a);
  command += " >out.txt 2>err.txt </dev/null";
  int status = std::system(command.c_str());
  Result r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = testing::ReadWholeFile(dir / "out.txt");
  r.err = testing::ReadWholeFile(dir / "err.txt");
  fs::remove_all(dir);
  return r;
}

std::string SchemaPath(const std::string& name) {
  return std::string(CLOUDFIT_SOURCE_DIR) + "/docs/schemas/" + name + ".schema.json";
}

void ExpectConforms(const std::string& schema, const std::vector<std::string>& args) {
  std::string joined;
  for (const std::string& a : args) joined += a + " ";
  Result r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << joined << "\n" << r.err;
  json doc = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << joined << " printed no JSON document:\n" << r.out;
  std::vector<std::string> errors = testing::ValidateAgainstSchemaFile(doc, SchemaPath(schema));
  std::string all;
  for (const std::string& e : errors) all += "  " + e + "\n";
  EXPECT_TRUE(errors.empty()) << joined << " breaks docs/schemas/" << schema << ".schema.json:\n"
                              << all;
}

// What `cloudfit probe --out` wrote on a real H200 (tests/fixtures/probe/, 2026-11-28): the
// schema describes the GPU part as a GPU fills it, not only as the tests' fakes do.
TEST(JsonSchemaCheckTest, AProbeRecordedOnAnH200Conforms) {
  json doc = json::parse(testing::ReadWholeFile(std::string(CLOUDFIT_SOURCE_DIR) +
                                                "/tests/fixtures/probe/h200-2026-11-28.json"));
  ASSERT_EQ(doc["gpu"]["devices"].size(), 1u);
  std::vector<std::string> errors = testing::ValidateAgainstSchemaFile(doc, SchemaPath("probe"));
  std::string all;
  for (const std::string& e : errors) all += "  " + e + "\n";
  EXPECT_TRUE(errors.empty()) << all;
}

// The JSON Schema subset checker itself: it must reject what the schema forbids.
TEST(JsonSchemaCheckTest, RejectsWrongTypesMissingFieldsAndBadDates) {
  json schema = json::parse(R"({
    "type": "object", "required": ["n", "d"],
    "properties": {
      "n": {"type": ["number", "null"], "minimum": 0},
      "d": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"},
      "k": {"enum": ["a", "b"]},
      "list": {"type": "array", "items": {"$ref": "#/$defs/item"}}
    },
    "$defs": {"item": {"type": "object", "required": ["x"], "properties": {"x": {"type": "integer"}}}}
  })");
  EXPECT_TRUE(
      testing::ValidateAgainstSchema(json::parse(R"({"n": null, "d": "2026-07-22"})"), schema, ".")
          .empty());
  EXPECT_EQ(
      testing::ValidateAgainstSchema(json::parse(R"({"n": "1", "d": "2026-07-22"})"), schema, ".")
          .size(),
      1u);
  EXPECT_EQ(testing::ValidateAgainstSchema(json::parse(R"({"n": 1})"), schema, ".").size(), 1u);
  EXPECT_EQ(
      testing::ValidateAgainstSchema(json::parse(R"({"n": 1, "d": 20600})"), schema, ".").size(),
      1u);
  EXPECT_EQ(
      testing::ValidateAgainstSchema(json::parse(R"({"n": -1, "d": "2026-07-22"})"), schema, ".")
          .size(),
      1u);
  EXPECT_EQ(testing::ValidateAgainstSchema(
                json::parse(R"({"n": 1, "d": "2026-07-22", "k": "c", "list": [{"x": 1.5}]})"),
                schema, ".")
                .size(),
            2u);
  // A keyword the checker does not implement is reported, not ignored.
  EXPECT_FALSE(
      testing::ValidateAgainstSchema(json(1), json::parse(R"({"multipleOf": 2})"), ".").empty());
}

TEST(JsonSchemaTest, EveryJsonOutputConformsToItsPublishedSchema) {
  ExpectConforms("gpus", {"gpus", "--json"});
  ExpectConforms("gpu", {"gpus", "a100 80g", "--json"});
  ExpectConforms("models", {"models", "--json"});
  ExpectConforms("instances", {"instances", "--json"});
  ExpectConforms("instances", {"instances", "--pricing", "spot", "--currency", "CNY", "--json"});
  ExpectConforms("catalog-info", {"catalog", "info", "--json"});
  ExpectConforms("estimate",
                 {"estimate", "--kind", "train", "--model", "ResNet-50", "--gpu", "A100-80GB",
                  "--gpus", "8", "--epochs", "1", "--dataset-samples", "1281167", "--json"});
  ExpectConforms("estimate", {"estimate", "--kind", "serve", "--model", "Llama-3.1-8B", "--gpu",
                              "L4", "--request-rate", "5", "--json"});
  ExpectConforms("estimate", {"estimate", "--kind", "render", "--gpu", "L4", "--frames", "100",
                              "--seconds-per-frame", "60", "--reference-gpu", "L4", "--json"});
  ExpectConforms("recommend", {"recommend", "--kind", "train", "--model", "ResNet-50", "--epochs",
                               "10", "--dataset-samples", "1281167", "--json"});
  ExpectConforms("recommend", {"recommend", "--kind", "serve", "--model", "Llama-3.1-8B",
                               "--request-rate", "5", "--json"});
  // Nothing feasible: best_estimate is null.
  ExpectConforms("recommend",
                 {"recommend", "--kind", "train", "--model", "ResNet-50", "--epochs", "1",
                  "--dataset-samples", "1281167", "--deadline-hours", "0.0001", "--json"});
  ExpectConforms("explain", {"explain", "--kind", "lora", "--model", "Llama-3.1-8B", "--json"});
  // Without a GPU: the GPU part still has every field, empty.
  ExpectConforms("probe", {"probe", "--quick", "--json"});
  ExpectConforms("monitor", {"monitor", "--no-gpu", "--interval", "0.05", "--json", "--", "sh",
                             "-c", "sleep 0.2"});
  ExpectConforms("poc", {"poc", "--gpus", "1", "--duration", "1", "--json", "--", "sh", "-c",
                         "echo '5 it/s'; echo '5 it/s'; echo '5 it/s'"});
  fs::path calibration = fs::path(CLOUDFIT_SOURCE_DIR) / "../shared/calibration";
  if (fs::is_directory(calibration)) {
    ExpectConforms("calibration",
                   {"calibrate", "report", "--cases-dir", calibration.string(), "--json"});
  }
}

TEST(JsonSchemaTest, ImportReportConforms) {
  fs::path dir = fs::temp_directory_path() / ("cloudfit-schema-import-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "lambda");
  std::ofstream(dir / "lambda/vms.csv")
      << "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,"
         "SpotPrice\ngpu_1x_l4,L4,1,8,32,0.5,us-east-1,,\n";
  ExpectConforms("import",
                 {"catalog", "import", "--as-of", "2026-11-01", "--out", (dir / "catalog").string(),
                  (dir / "lambda/vms.csv").string(), "--json"});
  fs::remove_all(dir);
}

// CSV: a header of snake_case names, then rows with as many fields; no unit or marker in a
// cell; dates are YYYY-MM-DD or empty.
void ExpectPlainCsv(const std::vector<std::string>& args) {
  std::string joined;
  for (const std::string& a : args) joined += a + " ";
  Result r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << joined << "\n" << r.err;
  CsvTable table;
  ASSERT_TRUE(ParseCsv(r.out, "stdout", CsvOptions{false}, &table).ok()) << joined << "\n" << r.out;
  static const std::regex kHeader(R"([a-z][a-z0-9_.]*)");
  for (const std::string& h : table.header) {
    EXPECT_TRUE(std::regex_match(h, kHeader)) << joined << ": header '" << h << "'";
  }
  static const std::regex kDate(R"(\d{4}-\d{2}-\d{2})");
  static const std::regex kNumber(R"(-?\d+(\.\d+)?)");
  for (const CsvRow& row : table.rows) {
    ASSERT_EQ(row.fields.size(), table.header.size()) << joined << " line " << row.line;
    for (size_t i = 0; i < row.fields.size(); ++i) {
      const std::string& h = table.header[i];
      std::string v(row.fields[i]);
      EXPECT_NE(v, "-") << joined << ": unknown '" << h << "' must be empty";
      EXPECT_NE(v, "unknown") << joined << ": unknown '" << h << "' must be empty";
      bool is_date = h == "as_of" || (h.size() > 6 && h.compare(h.size() - 6, 6, "_as_of") == 0);
      if (is_date && !v.empty()) {
        EXPECT_TRUE(std::regex_match(v, kDate)) << joined << ": " << h << "=" << v;
      }
      bool has_unit = std::regex_search(
          h,
          std::regex(
              R"(_(gib|usd|cny|hours|percent|tflops|tops|w|per_s|per_hour|billions|tokens)$|^(hours|rank|gpus|nodes|replicas|throughput|vcpus|rows)$)"));
      if (has_unit && !v.empty()) {
        EXPECT_TRUE(std::regex_match(v, kNumber)) << joined << ": " << h << "='" << v << "'";
      }
    }
  }
}

TEST(CsvTest, EveryCsvIsAHeaderAndPlainRows) {
  ExpectPlainCsv({"recommend", "--kind", "train", "--model", "ResNet-50", "--epochs", "10",
                  "--dataset-samples", "1281167", "--csv"});
  ExpectPlainCsv({"recommend", "--kind", "inference", "--model", "Llama-3.1-8B", "--tokens", "1e8",
                  "--currency", "CNY", "--csv"});
  ExpectPlainCsv({"instances", "--csv"});
  ExpectPlainCsv({"gpus", "--csv"});
  ExpectPlainCsv({"gpus", "L4", "--csv"});
  ExpectPlainCsv({"models", "--csv"});
  ExpectPlainCsv({"catalog", "info", "--csv"});
  ExpectPlainCsv({"catalog", "info", "--regions", "--csv"});
  ExpectPlainCsv({"explain", "--kind", "lora", "--model", "Llama-3.1-8B", "--csv"});
  ExpectPlainCsv({"estimate", "--kind", "train", "--model", "ResNet-50", "--gpu", "L4", "--csv"});
}

// `calibrate report --cases --csv` is one table (no group figures above it), and with
// --cross-validate each row also carries its error when its GPU, and its model, were left out
// of the fit. A few llama.cpp decode rows of ../shared/calibration keep the fits short.
TEST(CsvTest, CalibrationCasesAreOneTableWithTheirLeftOutErrors) {
  fs::path shared = fs::path(CLOUDFIT_SOURCE_DIR) / "../shared/calibration";
  if (!fs::is_directory(shared)) GTEST_SKIP() << "no ../shared/calibration";
  fs::path dir = fs::temp_directory_path() / ("cloudfit-cv-cases-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string train = testing::ReadWholeFile(shared / "train_throughput.csv");
  std::ofstream(dir / "train_throughput.csv") << train.substr(0, train.find('\n') + 1);
  std::istringstream llm(testing::ReadWholeFile(shared / "llm_memory_and_speed.csv"));
  std::ofstream kept(dir / "llm_memory_and_speed.csv");
  std::string line;
  std::getline(llm, line);
  kept << line << "\n";
  size_t rows = 0;
  while (std::getline(llm, line)) {
    bool decode = line.find(",decode_tokens_per_s,") != std::string::npos;
    bool one_gpu = line.find(",1x RTX 3090 24GB,") != std::string::npos ||
                   line.find(",1x RTX A6000 48GB,") != std::string::npos;
    if (decode && one_gpu) {
      kept << line << "\n";
      ++rows;
    }
  }
  kept.close();
  ASSERT_GE(rows, 10u);
  Result r = RunCli({"calibrate", "report", "--cases-dir", dir.string(), "--cross-validate",
                     "--passes", "2", "--cases", "--csv"},
                    "CLOUDFIT_CATALOG=");
  fs::remove_all(dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  CsvTable table;
  ASSERT_TRUE(ParseCsv(r.out, "stdout", CsvOptions{false}, &table).ok()) << r.out.substr(0, 400);
  EXPECT_EQ(r.out.rfind("id,", 0), 0u) << r.out.substr(0, 200);
  ASSERT_EQ(table.rows.size(), rows);
  int in_sample = table.ColumnIndex("error_percent");
  int gpu_out = table.ColumnIndex("error_gpu_out_percent");
  int model_out = table.ColumnIndex("error_model_out_percent");
  ASSERT_GE(in_sample, 0);
  ASSERT_GE(gpu_out, 0);
  ASSERT_GE(model_out, 0);
  int differ = 0;
  for (const CsvRow& row : table.rows) {
    double shipped = 0, left_out = 0, other = 0;
    ASSERT_TRUE(ParseDouble(row.fields[in_sample], &shipped)) << row.fields[in_sample];
    ASSERT_TRUE(ParseDouble(row.fields[gpu_out], &left_out)) << row.fields[gpu_out];
    ASSERT_TRUE(ParseDouble(row.fields[model_out], &other)) << row.fields[model_out];
    differ += left_out != shipped;
    // The two boards are GA102 twins: a fit on one predicts the other within 60%.
    EXPECT_LT(std::abs(left_out), 60) << row.fields[0];
    EXPECT_LT(std::abs(other), 60) << row.fields[0];
  }
  // The fits that never saw a row predict it differently from the shipped table.
  EXPECT_GT(differ, 0);
}

TEST(CsvTest, RecommendCsvSplitsWhatTheTableCombines) {
  Result r = RunCli({"recommend", "--kind", "train", "--model", "ResNet-50", "--epochs", "10",
                     "--dataset-samples", "1281167", "--csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  CsvTable table;
  ASSERT_TRUE(ParseCsv(r.out, "stdout", CsvOptions{false}, &table).ok());
  for (const char* column :
       {"rank", "pareto", "gpu", "gpus", "throughput", "throughput_unit", "memory_used_gib",
        "memory_capacity_gib", "price_usd_per_hour", "total_cost_usd", "cost_per_unit_usd", "unit",
        "price_as_of", "warnings"}) {
    EXPECT_GE(table.ColumnIndex(column), 0) << column << " missing from " << r.out.substr(0, 400);
  }
  ASSERT_FALSE(table.rows.empty());
  EXPECT_EQ(table.rows[0].fields[table.ColumnIndex("rank")], "1");
  // The sentence that heads the table for people goes to stderr.
  EXPECT_EQ(r.out.rfind("rank,", 0), 0u) << r.out.substr(0, 200);
  EXPECT_NE(r.err.find("recommend: ResNet-50"), std::string::npos) << r.err;
}

TEST(TerminalTableTest, NarrowsToColumnsAndWideShowsEverything) {
  std::vector<std::string> args = {"recommend", "--kind",   "train", "--model",
                                   "ResNet-50", "--epochs", "10",    "--dataset-samples",
                                   "1281167"};
  Result narrow = RunCli(args, "COLUMNS=100");
  ASSERT_EQ(narrow.exit_code, 0) << narrow.err;
  std::istringstream lines(narrow.out);
  size_t widest = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("  ", 0) == 0 || line.rfind("why", 0) == 0 || line.rfind("note", 0) == 0 ||
        line.rfind("warning", 0) == 0 || line.rfind("recommend:", 0) == 0 ||
        line.rfind("(", 0) == 0 || line.rfind("rejected", 0) == 0) {
      continue;  // sentences, not table rows
    }
    widest = std::max(widest, DisplayWidth(line));
  }
  EXPECT_LE(widest, 100u) << narrow.out;
  EXPECT_GT(widest, 60u) << narrow.out;
  EXPECT_NE(narrow.out.find("--wide shows every column"), std::string::npos) << narrow.out;

  args.push_back("--wide");
  Result wide = RunCli(args, "COLUMNS=100");
  ASSERT_EQ(wide.exit_code, 0) << wide.err;
  EXPECT_EQ(wide.out.find("--wide shows every column"), std::string::npos);
  EXPECT_NE(wide.out.find("bottleneck"), std::string::npos);
  EXPECT_EQ(narrow.out.find("bottleneck  "), std::string::npos)
      << "lowest priority is hidden first";
}

TEST(TerminalTableTest, PriceAgeIsSaidOnceAboveTheTable) {
  Result r = RunCli({"recommend", "--kind", "train", "--model", "ResNet-50", "--epochs", "10",
                     "--dataset-samples", "1281167"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  size_t table_start = r.out.find("\n #");
  ASSERT_NE(table_start, std::string::npos) << r.out;
  std::string above = r.out.substr(0, table_start);
  std::string below = r.out.substr(table_start);
  EXPECT_NE(above.find("warning: stale prices:"), std::string::npos) << above;
  EXPECT_EQ(below.find("stale prices"), std::string::npos) << "said once: " << below;
  EXPECT_EQ(below.find("days old"), std::string::npos) << below;
  EXPECT_NE(below.find("price as of"), std::string::npos) << "each row is dated";
}

TEST(TableTest, HidesHighestPriorityFirstAndCutsTheLastTextColumn) {
  Table t({{"a", "a"},
           {"b", "bbbbbbbbbb", false, 2},
           {"c", "cccccccccc", false, 1},
           {"w", "warnings", false, 3}});
  t.AddRow({"1", "x", "y", "a long warning that does not fit in the terminal at all"});
  TextLayout layout;
  layout.max_width = 40;
  std::string out = t.Render(OutputFormat::kTable, layout);
  std::istringstream lines(out);
  std::string header, row;
  std::getline(lines, header);
  std::getline(lines, row);
  EXPECT_LE(DisplayWidth(row), 40u) << out;
  EXPECT_NE(row.find("\xe2\x80\xa6"), std::string::npos) << "cut with an ellipsis: " << out;
  layout.max_width = 20;  // a, b and c need 25: warnings (3) goes, then b (2)
  out = t.Render(OutputFormat::kTable, layout);
  std::string first_line = out.substr(0, out.find('\n'));
  EXPECT_EQ(first_line, "a  cccccccccc") << out;
  EXPECT_NE(out.find("hidden to fit 20 columns: warnings, bbbbbbbbbb"), std::string::npos) << out;
  // Unknown: "-" for people, empty for machines.
  Table u({{"x", "x"}, {"y", "y"}});
  u.AddRow({"1", TableCell::Unknown()});
  EXPECT_EQ(u.Render(OutputFormat::kCsv), "x,y\n1,\n");
  EXPECT_EQ(u.Render(OutputFormat::kTable), "x  y\n1  -\n");
}

TEST(TerminalTest, WidthAndColourRules) {
  EXPECT_EQ(cli::ChooseWidth(true, 132, nullptr), 132u);
  EXPECT_EQ(cli::ChooseWidth(true, 0, "100"), 100u);
  EXPECT_EQ(cli::ChooseWidth(true, 0, nullptr), 80u);
  EXPECT_EQ(cli::ChooseWidth(false, 0, nullptr), 0u) << "a pipe gets every column";
  EXPECT_EQ(cli::ChooseWidth(false, 0, "90"), 90u);
  EXPECT_EQ(cli::ChooseWidth(false, 0, "abc"), 0u);
  EXPECT_TRUE(cli::ChooseColour(true, nullptr, "xterm-256color"));
  EXPECT_FALSE(cli::ChooseColour(false, nullptr, "xterm"));
  EXPECT_FALSE(cli::ChooseColour(true, "1", "xterm"));
  EXPECT_TRUE(cli::ChooseColour(true, "", "xterm")) << "NO_COLOR counts only when not empty";
  EXPECT_FALSE(cli::ChooseColour(true, nullptr, "dumb"));
}

// On a real terminal (script(1) gives one): a bold header; none with NO_COLOR; none in a pipe.
TEST(TerminalTest, ColourOnlyOnATerminalAndNeverWithNoColor) {
  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "no script(1)";
  fs::path dir = fs::temp_directory_path() / ("cloudfit-tty-" + std::to_string(getpid()));
  fs::create_directories(dir);
  auto on_tty = [&](const std::string& env) {
    std::string inner = "env " + env +
                        " TERM=xterm CLOUDFIT_CATALOG=" + std::string(CLOUDFIT_SOURCE_DIR) +
                        "/tests/fixtures/catalog " + CLOUDFIT_BINARY + " models";
    std::string command = "cd " + testing::ShellQuote(dir.string()) + " && script -qec " +
                          testing::ShellQuote(inner) + " /dev/null >tty.txt 2>&1 </dev/null";
    EXPECT_EQ(std::system(command.c_str()), 0);
    return testing::ReadWholeFile(dir / "tty.txt");
  };
  std::string coloured = on_tty("-u NO_COLOR");
  std::string plain = on_tty("NO_COLOR=1");
  fs::remove_all(dir);
  EXPECT_NE(coloured.find("\033[1m"), std::string::npos) << coloured.substr(0, 200);
  EXPECT_EQ(plain.find("\033["), std::string::npos) << plain.substr(0, 200);
  Result piped = RunCli({"models"});
  EXPECT_EQ(piped.out.find("\033["), std::string::npos);
}

TEST(VocabularyTest, DeprecatedSpellingsWorkWithANotice) {
  Result old_name = RunCli({"recommend", "--kind", "train", "--model", "ResNet-50", "--samples",
                            "1e6", "--max-gpus", "1", "--json"});
  Result new_name = RunCli({"recommend", "--kind", "train", "--model", "ResNet-50", "--samples",
                            "1e6", "--total-gpus-max", "1", "--json"});
  ASSERT_EQ(old_name.exit_code, 0) << old_name.err;
  ASSERT_EQ(new_name.exit_code, 0) << new_name.err;
  EXPECT_EQ(old_name.out, new_name.out);
  EXPECT_NE(old_name.err.find("recommend --max-gpus is deprecated; use --total-gpus-max"),
            std::string::npos)
      << old_name.err;
  EXPECT_EQ(new_name.err, "");
  Result gpus_old = RunCli({"gpus", "--memory-min=40", "--csv"});
  Result gpus_new = RunCli({"gpus", "--gpu-memory-min", "40", "--csv"});
  EXPECT_EQ(gpus_old.out, gpus_new.out);
  EXPECT_NE(gpus_old.err.find("deprecated"), std::string::npos);
}

// Every rename points at a flag the command has, and the old name is gone from its --help.
TEST(VocabularyTest, EveryRenameNamesAFlagOfItsCommand) {
  for (const cli::DeprecatedFlag& d : cli::DeprecatedFlags()) {
    std::vector<std::string> args;
    std::istringstream words(d.command);
    for (std::string w; words >> w;) args.push_back(w);
    args.push_back("--help");
    Result help = RunCli(args);
    EXPECT_EQ(help.exit_code, 0) << d.command;
    std::regex new_flag(d.new_name + "\\b");
    EXPECT_TRUE(std::regex_search(help.out, new_flag)) << d.command << " lacks " << d.new_name;
    if (!d.only_with_value) {
      std::regex old_flag(d.old_name + "(?![-a-z])");
      EXPECT_FALSE(std::regex_search(help.out, old_flag))
          << d.command << " still lists " << d.old_name;
    }
  }
}

// A command line that runs adds only the workload-field flags it names (main.cc builds the rest
// only for help and errors): a named field must still take its value, and a misspelled one must
// still be told the flag it meant, which needs every flag.
TEST(VocabularyTest, WorkloadFieldFlagsTakeValuesAndAreSuggestedWhenMisspelled) {
  Result named = RunCli({"estimate", "--kind", "lora", "--model", "Llama-3.1-8B", "--gpu", "A100",
                         "--seq-len=4096", "--json"});
  EXPECT_EQ(named.exit_code, 0) << named.err;
  EXPECT_NE(named.out.find("\"seq_len\": 4096"), std::string::npos) << named.out;
  Result misspelled = RunCli({"estimate", "--kind", "lora", "--model", "Llama-3.1-8B", "--gpu",
                              "A100", "--seq-lne", "4096"});
  EXPECT_EQ(misspelled.exit_code, 2);
  EXPECT_NE(misspelled.err.find("unknown option '--seq-lne' for 'estimate'; did you mean "
                                "'--seq-len'"),
            std::string::npos)
      << misspelled.err;
}

TEST(VocabularyTest, DidYouMeanForFlagsAndSubcommands) {
  Result flag = RunCli({"instances", "--gpus-mn", "8"});
  EXPECT_EQ(flag.exit_code, 2);
  EXPECT_NE(flag.err.find("unknown option '--gpus-mn' for 'instances'; did you mean '--gpus-min'"),
            std::string::npos)
      << flag.err;
  Result sub = RunCli({"catalog", "infoo"});
  EXPECT_EQ(sub.exit_code, 2);
  EXPECT_NE(sub.err.find("did you mean 'info'"), std::string::npos) << sub.err;
  Result top = RunCli({"recomend", "--kind", "train"});
  EXPECT_NE(top.err.find("did you mean 'recommend'"), std::string::npos) << top.err;
  Result value = RunCli({"instances", "--top", "--csv"});  // a value that looks like a flag
  EXPECT_EQ(value.exit_code, 2);
}

TEST(VocabularyTest, FrameworkDtypeNamesAreAccepted) {
  std::vector<std::string> base = {"estimate", "--kind", "train",  "--model",    "ResNet-50",
                                   "--gpu",    "A100",   "--json", "--precision"};
  for (auto [alias, name] : std::vector<std::pair<std::string, std::string>>{
           {"float16", "fp16"}, {"bfloat16", "bf16"}, {"float32", "fp32"}}) {
    std::vector<std::string> a = base, b = base;
    a.push_back(alias);
    b.push_back(name);
    Result ra = RunCli(a), rb = RunCli(b);
    ASSERT_EQ(ra.exit_code, 0) << alias << ": " << ra.err;
    EXPECT_EQ(ra.out, rb.out) << alias;
  }
  Result sorted = RunCli({"gpus", "--sort", "bfloat16", "--csv"});
  EXPECT_EQ(sorted.exit_code, 0) << sorted.err;
  Result bad = RunCli({"estimate", "--kind", "train", "--model", "ResNet-50", "--gpu", "A100",
                       "--precision", "float13"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("float13"), std::string::npos) << bad.err;
}

TEST(HelpTest, RecommendHelpIsGrouped) {
  Result help = RunCli({"recommend", "--help"});
  ASSERT_EQ(help.exit_code, 0);
  for (const char* group : {"Workload:", "Hardware:", "Filters:", "Pricing and objective:",
                            "Calibration:", "Output:"}) {
    EXPECT_NE(help.out.find(group), std::string::npos) << group << "\n" << help.out.substr(0, 300);
  }
}

}  // namespace
}  // namespace cloudfit

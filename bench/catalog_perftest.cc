// Speed of the ground floor: loading the built-in catalog (what every command pays at start),
// querying it, importing SkyPilot files, and loading catalogs of growing size.
// Run: build/bench/catalog_perftest   (and bench/cli_startup.sh for whole-process time)
//
// The synthetic inputs grow by whole copies, so a linear stage shows a constant rate (bytes/s,
// items/s) across the sizes. `catalog_perftest --write-synthetic=DIR` writes them as files for
// timing the command line (aws-5mb/vms.csv, aws-20mb/vms.csv, offers-50k/ and so on) and exits.
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <string_view>

#include "catalog/reference_tables.h"
#include "cloudfit/catalog.h"
#include "cloudfit/catalog_import.h"
#include "cloudfit/cost.h"
#include "cloudfit/instance_query.h"
#include "synthetic_catalog.h"
#include "util/csv.h"
#include "util/file.h"

namespace cloudfit {
namespace {

namespace fs = std::filesystem;

const std::string kSharedAws =
    std::string(CLOUDFIT_SOURCE_DIR) + "/../shared/catalogs/skypilot/v9/aws/vms.sample.csv";

// A SkyPilot AWS vms.csv of at least `target_bytes`: the rows of the shared AWS sample (real
// types, GPUs and GpuInfo literals), then copies of them under new type names ("g5.2xlarge" ->
// "g5c7.2xlarge"), so the number of types grows with the size as in the real file. "" when
// ../shared is absent.
std::string SyntheticSkyPilotAws(size_t target_bytes) {
  std::string sample;
  if (!ReadFile(kSharedAws, &sample).ok()) return "";
  CsvTable table;
  CsvOptions options;
  options.allow_comments = false;
  if (!ParseCsv(sample, kSharedAws, options, &table).ok()) return "";
  int type_column = table.ColumnIndex("InstanceType");
  std::string out = sample.substr(0, sample.find('\n') + 1);
  for (int copy = 0; out.size() < target_bytes; ++copy) {
    for (const CsvRow& row : table.rows) {
      std::vector<std::string> fields(row.fields.begin(), row.fields.end());
      std::string& type = fields[static_cast<size_t>(type_column)];
      if (size_t dot = type.find('.'); copy > 0 && dot != std::string::npos) {
        std::string_view name = type;
        type = fmt::format("{}c{}{}", name.substr(0, dot), copy, name.substr(dot));
      }
      for (size_t i = 0; i < fields.size(); ++i) {
        if (i > 0) out += ',';
        out += CsvEscape(fields[i]);
      }
      out += '\n';
    }
  }
  return out;
}

void BM_LoadBuiltInCatalog(benchmark::State& state) {
  for (auto _ : state) {
    Catalog catalog;
    Status s = Catalog::LoadBuiltIn(&catalog);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
    // Every table, as a command that reads them all pays (instance types and models are made
    // on first use).
    benchmark::DoNotOptimize(catalog.instances().size() + catalog.models().size());
  }
}
BENCHMARK(BM_LoadBuiltInCatalog)->Unit(benchmark::kMillisecond);

// The same data through the CSV loaders, as a catalog directory is loaded.
void BM_ParseBuiltInFiles(benchmark::State& state) {
  Catalog built_in;
  if (!Catalog::LoadBuiltIn(&built_in).ok()) state.SkipWithError("load failed");
  for (auto _ : state) {
    Catalog catalog;
    Status s = Catalog::FromFiles(built_in.files(), "built-in", &catalog);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
    benchmark::DoNotOptimize(catalog.instances().size());
  }
}
BENCHMARK(BM_ParseBuiltInFiles)->Unit(benchmark::kMillisecond);

// What every Recommend asks of the catalog besides its tables: the cost tables and the reference
// tables the workload defaults read, each read once per catalog and then shared.
void BM_CostData(benchmark::State& state) {
  Catalog catalog;
  if (!Catalog::LoadBuiltIn(&catalog).ok()) state.SkipWithError("load failed");
  for (auto _ : state) {
    CostData costs;
    Status s = CostData::Load(catalog, &costs);
    benchmark::DoNotOptimize(costs.FindBilling("aws"));
  }
}
BENCHMARK(BM_CostData)->Unit(benchmark::kMicrosecond);

void BM_ReadReferenceTables(benchmark::State& state) {
  Catalog catalog;
  if (!Catalog::LoadBuiltIn(&catalog).ok()) state.SkipWithError("load failed");
  for (auto _ : state) {
    for (const char* name : {"recipes.csv", "loader_rates.csv"}) {
      std::shared_ptr<const CsvTable> table;
      Status s = ReadReferenceTable(catalog, name, &table);
      benchmark::DoNotOptimize(table->rows.size());
    }
  }
}
BENCHMARK(BM_ReadReferenceTables)->Unit(benchmark::kMicrosecond);

void BM_QueryAllOffersByPrice(benchmark::State& state) {
  Catalog catalog;
  if (!Catalog::LoadBuiltIn(&catalog).ok()) state.SkipWithError("load failed");
  InstanceQuery q;
  std::vector<Offer> offers;
  for (auto _ : state) {
    Status s = FindOffers(catalog, q, &offers);
    benchmark::DoNotOptimize(offers.size());
  }
  state.counters["offers"] = static_cast<double>(offers.size());
}
BENCHMARK(BM_QueryAllOffersByPrice)->Unit(benchmark::kMillisecond);

void BM_ImportLargestSharedFile(benchmark::State& state) {
  // Lambda's vms.csv is the largest full file in ../shared/catalogs/skypilot (74,737 bytes).
  std::string path =
      std::string(CLOUDFIT_SOURCE_DIR) + "/../shared/catalogs/skypilot/v9/lambda/vms.csv";
  if (!std::filesystem::exists(path)) {
    state.SkipWithError("../shared is absent");
    return;
  }
  Catalog base;
  if (!Catalog::LoadBuiltIn(&base).ok()) state.SkipWithError("load failed");
  for (auto _ : state) {
    CatalogFiles files;
    ImportReport report;
    Status s = ImportSkyPilot(base, {path}, {}, &files, &report);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
    benchmark::DoNotOptimize(files.size());
  }
}
BENCHMARK(BM_ImportLargestSharedFile)->Unit(benchmark::kMillisecond);

// `catalog import` of a synthetic AWS file of Arg KiB over the built-in catalog, merge and
// check included (not the final write). Linear: bytes_per_second stays flat as Arg grows.
void BM_ImportSyntheticAws(benchmark::State& state) {
  std::string text = SyntheticSkyPilotAws(static_cast<size_t>(state.range(0)) << 10);
  if (text.empty()) {
    state.SkipWithError("../shared is absent");
    return;
  }
  fs::path path = fs::temp_directory_path() / fmt::format("cloudfit-perftest-{}.csv", getpid());
  std::ofstream(path, std::ios::binary) << text;
  Catalog base;
  if (!Catalog::LoadBuiltIn(&base).ok()) state.SkipWithError("load failed");
  SkyPilotImportOptions options;
  options.cloud = "aws";
  options.as_of = "2026-01-01";
  ImportReport report;
  for (auto _ : state) {
    CatalogFiles files;
    report = ImportReport();
    Status s = ImportSkyPilot(base, {path.string()}, options, &files, &report);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
    benchmark::DoNotOptimize(files.size());
  }
  fs::remove(path);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["rows"] = report.files.empty() ? 0 : report.files[0].rows_read;
  state.counters["types"] = report.types_added + report.types_updated;
}
BENCHMARK(BM_ImportSyntheticAws)
    ->Arg(256)
    ->Arg(1 << 10)
    ->Arg(5 << 10)
    ->Arg(20 << 10)
    ->Unit(benchmark::kMillisecond);

// Loading (parsing and checking) a catalog directory with Arg synthetic offers beside the
// built-in ones. Linear: items_per_second stays flat as Arg grows.
void BM_LoadSyntheticOffers(benchmark::State& state) {
  CatalogFiles files = SyntheticOfferCatalog(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    Catalog catalog;
    Status s = Catalog::FromFiles(files, "synthetic", &catalog);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
    benchmark::DoNotOptimize(catalog.instances().size());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_LoadSyntheticOffers)->Arg(1000)->Arg(12500)->Arg(50000)->Unit(benchmark::kMillisecond);

// --write-synthetic=DIR: the inputs above as files, for timing the command line.
int WriteSynthetic(const fs::path& dir) {
  for (int mib : {1, 5, 20}) {
    std::string text = SyntheticSkyPilotAws(static_cast<size_t>(mib) << 20);
    if (text.empty()) {
      std::cerr << "catalog_perftest: ../shared is absent; no SkyPilot sample to grow\n";
      return 1;
    }
    fs::create_directories(dir / fmt::format("aws-{}mb", mib));
    std::ofstream(dir / fmt::format("aws-{}mb", mib) / "vms.csv", std::ios::binary) << text;
  }
  for (int offers : {1000, 2500, 5000, 12500, 25000, 50000}) {
    fs::path root = dir / fmt::format("offers-{}", offers);
    for (const auto& [name, contents] : SyntheticOfferCatalog(offers)) {
      fs::create_directories((root / name).parent_path());
      std::ofstream(root / name, std::ios::binary) << contents;
    }
  }
  std::cout << "wrote aws-{1,5,20}mb/vms.csv and offers-{1000,2500,5000,12500,25000,50000}/ under "
            << dir.string() << "\n";
  return 0;
}

}  // namespace
}  // namespace cloudfit

int main(int argc, char** argv) {
  constexpr std::string_view kWrite = "--write-synthetic=";
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg.substr(0, kWrite.size()) == kWrite) {
      return cloudfit::WriteSynthetic(std::string(arg.substr(kWrite.size())));
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

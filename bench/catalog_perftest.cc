// Speed of the ground floor: loading the built-in catalog (what every command pays at start),
// querying it, and importing the largest shared SkyPilot file.
// Run: build/bench/catalog_perftest   (and bench/cli_startup.sh for whole-process time)
#include <filesystem>

#include <benchmark/benchmark.h>

#include "cloudfit/catalog.h"
#include "cloudfit/catalog_import.h"
#include "cloudfit/instance_query.h"

namespace cloudfit {
namespace {

void BM_LoadBuiltInCatalog(benchmark::State& state) {
  for (auto _ : state) {
    Catalog catalog;
    Status s = Catalog::LoadBuiltIn(&catalog);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
    benchmark::DoNotOptimize(catalog.instances().size());
  }
}
BENCHMARK(BM_LoadBuiltInCatalog)->Unit(benchmark::kMillisecond);

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
  std::string path = std::string(CLOUDFIT_SOURCE_DIR) + "/../shared/catalogs/skypilot/v9/lambda/vms.csv";
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

}  // namespace
}  // namespace cloudfit

BENCHMARK_MAIN();

// Speed of recommend: one recommendation over the built-in catalog, and over the built-in
// catalog merged with every SkyPilot file in ../shared/catalogs (when present), and a workload
// whose estimates are kept from an earlier request, and over synthetic catalogs of growing size.
// Run: build/bench/recommend_perftest; batch mode: bench/recommend_batch.sh.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <filesystem>

#include "cloudfit/catalog_import.h"
#include "cloudfit/recommend.h"
#include "synthetic_catalog.h"

namespace cloudfit {
namespace {

Workload LoraWorkload(const Catalog& catalog) {
  Workload w;
  SetWorkloadField(&w, "kind", "lora");
  SetWorkloadField(&w, "model", "Llama-3.1-8B");
  SetWorkloadField(&w, "seq_len", "2048");
  SetWorkloadField(&w, "recompute", "full");
  SetWorkloadField(&w, "tokens", "5e7");
  FinalizeWorkload(catalog, &w);
  return w;
}

void RunRecommend(benchmark::State& state, const Catalog& catalog) {
  Workload w = LoraWorkload(catalog);
  RecommendOptions o;
  size_t feasible = 0;
  for (auto _ : state) {
    Recommendation r;
    Status s = Recommend(catalog, w, o, &r);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
    feasible = r.ranked.size();
    benchmark::DoNotOptimize(feasible);
  }
  state.counters["instance_types"] = static_cast<double>(catalog.instances().size());
  state.counters["feasible"] = static_cast<double>(feasible);
}

void BM_RecommendBuiltIn(benchmark::State& state) {
  Catalog catalog;
  if (!Catalog::LoadBuiltIn(&catalog).ok()) state.SkipWithError("load failed");
  RunRecommend(state, catalog);
}
BENCHMARK(BM_RecommendBuiltIn)->Unit(benchmark::kMillisecond);

// The LoRA request recommended once to warm the kept estimates and pass, then again per
// iteration with `vary` applied to its options first.
template <typename Vary>
void RunRepeated(benchmark::State& state, Vary vary) {
  Catalog catalog;
  if (!Catalog::LoadBuiltIn(&catalog).ok()) state.SkipWithError("load failed");
  Workload w = LoraWorkload(catalog);
  RecommendOptions o;
  WorkloadEstimates estimates;
  Recommendation warm;
  Recommend(catalog, w, o, &warm, &estimates);
  for (auto _ : state) {
    vary(&o);
    Recommendation r;
    Status s = Recommend(catalog, w, o, &r, &estimates);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
    benchmark::DoNotOptimize(r.ranked.size());
  }
}

// A request repeated (a batch or a server): its estimates and its candidate pass are kept, so
// this is the cost of ranking the offers and describing those shown.
void BM_RecommendRepeatedWorkload(benchmark::State& state) {
  RunRepeated(state, [](RecommendOptions*) {});
}
BENCHMARK(BM_RecommendRepeatedWorkload)->Unit(benchmark::kMicrosecond);

// A workload recommended on before under other pricing options (here a new budget each time):
// its estimates are kept but every offer is priced again, so this adds the pricing stage.
void BM_RecommendRepeatedWorkloadNewBudget(benchmark::State& state) {
  double budget = 1e6;
  RunRepeated(state, [&budget](RecommendOptions* o) { o->budget = budget++; });
}
BENCHMARK(BM_RecommendRepeatedWorkloadNewBudget)->Unit(benchmark::kMicrosecond);

void BM_RecommendBuiltInPlusSharedImports(benchmark::State& state) {
  namespace fs = std::filesystem;
  std::string dir = std::string(CLOUDFIT_SOURCE_DIR) + "/../shared/catalogs/skypilot";
  if (!fs::exists(dir)) {
    state.SkipWithError("../shared is absent");
    return;
  }
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.path().extension() == ".csv" && e.path().filename().string().rfind("vms", 0) == 0) {
      files.push_back(e.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  Catalog base;
  if (!Catalog::LoadBuiltIn(&base).ok()) state.SkipWithError("load failed");
  CatalogFiles merged;
  ImportReport report;
  SkyPilotImportOptions options;
  options.as_of = "2026-07-22";
  if (!ImportSkyPilot(base, files, options, &merged, &report).ok()) state.SkipWithError("import");
  Catalog catalog;
  if (!Catalog::FromFiles(merged, "merged", &catalog).ok()) state.SkipWithError("merged load");
  RunRecommend(state, catalog);
}
BENCHMARK(BM_RecommendBuiltInPlusSharedImports)->Unit(benchmark::kMillisecond);

// Scale: one recommendation over the built-in catalog plus Arg(0) synthetic offers, with nothing
// kept (Arg(1) = 0: every type estimated afresh, as a one-shot run does) or with the workload's
// estimates kept from the requests before (Arg(1) = 1, as a batch or the server runs).
// items_per_second counts offers, so a flat figure as Arg(0) grows means linear time.
void BM_RecommendSyntheticOffers(benchmark::State& state) {
  Catalog catalog;
  if (!Catalog::FromFiles(SyntheticOfferCatalog(static_cast<int>(state.range(0))), "synthetic",
                          &catalog)
           .ok()) {
    state.SkipWithError("synthetic catalog did not load");
    return;
  }
  Workload w = LoraWorkload(catalog);
  RecommendOptions o;
  WorkloadEstimates kept;
  size_t offers = 0;
  for (const InstanceType& t : catalog.instances()) offers += t.regions.size();
  for (auto _ : state) {
    Recommendation r;
    Status s = Recommend(catalog, w, o, &r, state.range(1) ? &kept : nullptr);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
    benchmark::DoNotOptimize(r.ranked.size());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * offers));
  state.counters["offers"] = static_cast<double>(offers);
  state.counters["instance_types"] = static_cast<double>(catalog.instances().size());
}
BENCHMARK(BM_RecommendSyntheticOffers)
    ->Args({1000, 0})
    ->Args({12500, 0})
    ->Args({50000, 0})
    ->Args({1000, 1})
    ->Args({12500, 1})
    ->Args({50000, 1})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace cloudfit

BENCHMARK_MAIN();

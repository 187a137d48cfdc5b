// Speed of the serving estimate: one candidate on one GPU and on eight (every split of the
// GPUs into model copies is tried), a whole serving recommendation (with its quantised
// alternatives), and, for comparison, the discrete-event simulation the closed form replaces.
// Run: build/bench/serving_perftest
#include <benchmark/benchmark.h>

#include "cloudfit/estimate.h"
#include "cloudfit/recommend.h"
#include "estimate/llm_serving.h"
#include "estimate/serving_simulation.h"

namespace cloudfit {
namespace {

const Catalog& BuiltIn() {
  static const Catalog* catalog = [] {
    auto* c = new Catalog;
    Catalog::LoadBuiltIn(c);
    return c;
  }();
  return *catalog;
}

Workload Serving(const char* model, const char* rate) {
  Workload w;
  SetWorkloadField(&w, "kind", "serve");
  SetWorkloadField(&w, "model", model);
  SetWorkloadField(&w, "request_rate", rate);
  SetWorkloadField(&w, "ttft_target_ms", "1000");
  FinalizeWorkload(BuiltIn(), &w);
  return w;
}

void EstimateOn(benchmark::State& state, const char* gpu, double gpus) {
  Workload w = Serving("Llama-2-13B", "30");
  HardwareSpec spec;
  spec.gpu = gpu;
  spec.gpus = gpus;
  Hardware hw;
  if (!ResolveHardware(BuiltIn(), spec, &hw).ok()) state.SkipWithError("hardware");
  for (auto _ : state) {
    Estimate e;
    EstimateWorkload(BuiltIn(), w, hw, &e);
    benchmark::DoNotOptimize(e.serving->replicas);
  }
}

void BM_ServingEstimateOneGpu(benchmark::State& state) { EstimateOn(state, "A100-80GB", 1); }
BENCHMARK(BM_ServingEstimateOneGpu)->Unit(benchmark::kMicrosecond);

void BM_ServingEstimateEightGpus(benchmark::State& state) { EstimateOn(state, "H100", 8); }
BENCHMARK(BM_ServingEstimateEightGpus)->Unit(benchmark::kMicrosecond);

void BM_ServingRecommend(benchmark::State& state) {
  Workload w = Serving("Llama-2-13B", "30");
  RecommendOptions o;
  size_t considered = 0;
  for (auto _ : state) {
    Recommendation r;
    Recommend(BuiltIn(), w, o, &r);
    considered = r.candidates_considered;
    benchmark::DoNotOptimize(r.ranked.size());
  }
  state.counters["candidates"] = static_cast<double>(considered);
}
BENCHMARK(BM_ServingRecommend)->Unit(benchmark::kMillisecond);

void BM_SimulateOneLoadPoint(benchmark::State& state) {
  ReplicaSteps s;
  s.decode_step_s = [](double n) { return 9e-3 + 0.12e-3 * n; };
  s.prompt_tokens = 512;
  s.output_tokens = 256;
  s.prefill_token_s = 0.05e-3;
  s.prefill_s = s.decode_step_s(1) + 512 * s.prefill_token_s;
  s.max_sequences = 256;
  double rate = 0.7 * SaturationRate(s);
  for (auto _ : state) {
    SimulatedLoad sim = SimulateLoad(s, rate, 0.95, 5000, 1);
    benchmark::DoNotOptimize(sim.ttft_s);
  }
}
BENCHMARK(BM_SimulateOneLoadPoint)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace cloudfit

BENCHMARK_MAIN();

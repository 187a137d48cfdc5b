// The closed-form load model (serving_load.h) against the discrete-event simulation of the same
// engine (serving_simulation.h): same step times, Poisson arrivals, and the figures a serving
// plan rests on: the batch a load forms, TTFT and TPOT at p50 and p95 (p99 for the tail).
#include <cmath>
#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "estimate/serving_load.h"
#include "estimate/serving_simulation.h"

namespace cloudfit {
namespace {

// Step times of a 7-8B model in 16 bit on one A100-class GPU: a decode iteration reads ~16 GB of
// weights (~9 ms) plus ~0.12 ms of KV cache and compute per sequence; a prompt token costs
// 0.05 ms of compute inside an iteration.
ReplicaSteps SevenBillionOnOneGpu(int prompt, int output, int cap) {
  ReplicaSteps s;
  s.policy = BatchingPolicy::kContinuous;
  s.decode_step_s = [](double n) { return 9e-3 + 0.12e-3 * n; };
  s.prompt_tokens = prompt;
  s.output_tokens = output;
  s.prefill_token_s = 0.05e-3;
  s.prefill_s = s.decode_step_s(1) + prompt * s.prefill_token_s;
  s.max_sequences = cap;
  s.chunk_tokens = 2048;
  return s;
}

double RelativeError(double model, double simulated) {
  return std::abs(model - simulated) / simulated;
}

struct Tolerances {
  double sequences, ttft_p50, ttft_p95, tpot_p50, tpot_p95;
};

// Runs the model and the simulation over a range of utilisations, prints both, and checks the
// relative errors. Returns the worst TTFT p95 error, for the record.
void CompareOverLoads(const std::string& name, const ReplicaSteps& steps,
                      const std::vector<double>& utilisations, const Tolerances& tol) {
  double saturation = SaturationRate(steps);
  std::printf("%s: saturation %.3f requests/s\n", name.c_str(), saturation);
  std::printf("%6s %9s %9s | %9s %9s | %9s %9s | %9s %9s | %9s %9s\n", "util", "seq", "sim",
              "ttft50", "sim", "ttft95", "sim", "tpot50", "sim", "tpot95", "sim");
  for (double u : utilisations) {
    double rate = u * saturation;
    LoadPoint m = EvaluateLoad(steps, rate, 0.95);
    SimulatedLoad sim = SimulateLoad(steps, rate, 0.95, 20000, 42);
    std::printf("%6.2f %9.2f %9.2f | %9.1f %9.1f | %9.1f %9.1f | %9.2f %9.2f | %9.2f %9.2f\n", u,
                m.sequences, sim.mean_sequences, m.ttft_median_s * 1e3, sim.ttft_median_s * 1e3,
                m.ttft_s * 1e3, sim.ttft_s * 1e3, m.tpot_median_s * 1e3,
                sim.tpot_median_s * 1e3, m.tpot_s * 1e3, sim.tpot_s * 1e3);
    ASSERT_TRUE(m.stable);
    EXPECT_NEAR(sim.completed_per_s, rate, 0.05 * rate) << "the simulation keeps up";
    if (steps.policy == BatchingPolicy::kContinuous) {
      EXPECT_LE(RelativeError(m.sequences, sim.mean_sequences), tol.sequences) << name << " at " << u;
      EXPECT_LE(RelativeError(m.tpot_median_s, sim.tpot_median_s), tol.tpot_p50) << name << " at " << u;
      EXPECT_LE(RelativeError(m.tpot_s, sim.tpot_s), tol.tpot_p95) << name << " at " << u;
    }
    EXPECT_LE(RelativeError(m.ttft_median_s, sim.ttft_median_s), tol.ttft_p50) << name << " at " << u;
    EXPECT_LE(RelativeError(m.ttft_s, sim.ttft_s), tol.ttft_p95) << name << " at " << u;
  }
}

TEST(ServingLoadTest, ContinuousBatchingAgreesWithTheSimulation) {
  CompareOverLoads("7B, 512 in / 256 out, cap 256", SevenBillionOnOneGpu(512, 256, 256),
                   {0.05, 0.2, 0.5, 0.7, 0.85}, {0.05, 0.25, 0.20, 0.05, 0.15});
}

TEST(ServingLoadTest, LongPromptsAndShortOutputsAgreeWithTheSimulation) {
  // Prefill-heavy: prompts take a large share of the GPU and stall decoding. Above 70% of
  // saturation the model underestimates (at 85%: batch -25%, p95 TTFT -22%), a limitation
  // docs/estimation.md states; plans run at 70% by default.
  CompareOverLoads("7B, 2000 in / 64 out, cap 256", SevenBillionOnOneGpu(2000, 64, 256),
                   {0.2, 0.5, 0.7}, {0.25, 0.15, 0.10, 0.15, 0.25});
}

TEST(ServingLoadTest, ASmallSequenceCapQueuesForSlots) {
  // Eight slots: near saturation requests wait for a slot (the M/D/c part of the model).
  CompareOverLoads("7B, 256 in / 128 out, cap 8", SevenBillionOnOneGpu(256, 128, 8),
                   {0.2, 0.5, 0.7, 0.85}, {0.05, 0.15, 0.30, 0.05, 0.05});
}

TEST(ServingLoadTest, OneRequestAtATimeIsAnMD1Queue) {
  ReplicaSteps s = SevenBillionOnOneGpu(512, 128, 1);
  s.policy = BatchingPolicy::kSingle;
  CompareOverLoads("llama.cpp-style, one slot", s, {0.2, 0.5, 0.7, 0.85},
                   {1, 0.25, 0.15, 1, 1});
  // Mean wait of M/D/1 by Pollaczek-Khinchine: rho x S / (2 (1 - rho)), exactly.
  double service = s.prefill_s + 127 * s.decode_step_s(1);
  EXPECT_NEAR(SaturationRate(s), 1 / service, 1e-9);
}

TEST(ServingLoadTest, StaticBatchingAgreesWithTheSimulation) {
  // Hugging Face generate()-style batches of up to 32: a request waits for the batch in flight.
  ReplicaSteps s = SevenBillionOnOneGpu(512, 256, 32);
  s.policy = BatchingPolicy::kStatic;
  s.batch_prefill_s = [&s](double b) { return s.decode_step_s(b) + b * 512 * s.prefill_token_s; };
  CompareOverLoads("static batches of up to 32", s, {0.05, 0.2, 0.5, 0.7, 0.85},
                   {1, 0.06, 0.06, 1, 1});
}

TEST(ServingLoadTest, LatenciesGrowWithLoadAndTheBatchFollowsLittlesLaw) {
  ReplicaSteps s = SevenBillionOnOneGpu(512, 256, 256);
  double saturation = SaturationRate(s);
  LoadPoint prev = EvaluateLoad(s, 0.01 * saturation, 0.95);
  // A nearly idle copy decodes alone: TPOT is one sequence's step, not the full batch's.
  EXPECT_NEAR(prev.tpot_median_s, s.decode_step_s(1), 0.01 * s.decode_step_s(1));
  EXPECT_LT(prev.sequences, 1);
  for (double u : {0.1, 0.3, 0.5, 0.7, 0.9}) {
    LoadPoint lp = EvaluateLoad(s, u * saturation, 0.95);
    EXPECT_GT(lp.sequences, prev.sequences);
    EXPECT_GE(lp.ttft_s, prev.ttft_s);
    EXPECT_GT(lp.tpot_s, prev.tpot_s);
    EXPECT_NEAR(lp.utilisation, u, 1e-9);
    // Little's law: sequences = rate x (output - 1) x mean token interval.
    EXPECT_NEAR(lp.sequences, u * saturation * 255 * lp.tpot_median_s, 1e-3 * lp.sequences);
    prev = lp;
  }
  EXPECT_FALSE(EvaluateLoad(s, 1.01 * saturation, 0.95).stable);
  // Higher percentiles are never below lower ones.
  LoadPoint p50 = EvaluateLoad(s, 0.7 * saturation, 0.5);
  LoadPoint p99 = EvaluateLoad(s, 0.7 * saturation, 0.99);
  EXPECT_GE(p99.ttft_s, p50.ttft_s);
  EXPECT_GT(p99.tpot_s, p50.tpot_s);
}

TEST(ServingLoadTest, TargetsBoundThePlannedRate) {
  ReplicaSteps s = SevenBillionOnOneGpu(512, 256, 256);
  double saturation = SaturationRate(s);
  // No targets: the utilisation bound.
  EXPECT_NEAR(MaxRateWithinTargets(s, 0.95, std::nullopt, std::nullopt, 0.7), 0.7 * saturation,
              1e-9 * saturation);
  // A TPOT target between the idle and the 70% figure binds below 70%, and holds there.
  double idle_tpot = EvaluateLoad(s, 1e-6 * saturation, 0.95).tpot_s;
  double busy_tpot = EvaluateLoad(s, 0.7 * saturation, 0.95).tpot_s;
  double target = 0.5 * (idle_tpot + busy_tpot);
  double rate = MaxRateWithinTargets(s, 0.95, std::nullopt, target, 0.7);
  EXPECT_GT(rate, 0);
  EXPECT_LT(rate, 0.7 * saturation);
  EXPECT_LE(EvaluateLoad(s, rate, 0.95).tpot_s, target);
  EXPECT_GT(EvaluateLoad(s, rate + 0.01 * saturation, 0.95).tpot_s, target);
  // A target an idle copy misses: no rate.
  EXPECT_EQ(MaxRateWithinTargets(s, 0.95, 1e-3, std::nullopt, 0.7), 0);
}

TEST(ServingLoadTest, NormalQuantileMatchesTables) {
  EXPECT_NEAR(NormalQuantile(0.5), 0, 1e-9);
  EXPECT_NEAR(NormalQuantile(0.95), 1.644854, 1e-5);
  EXPECT_NEAR(NormalQuantile(0.99), 2.326348, 1e-5);
  EXPECT_NEAR(NormalQuantile(0.01), -2.326348, 1e-5);
}

}  // namespace
}  // namespace cloudfit

// The closed-form load model of one serving copy. The method, its assumptions and its check
// against the discrete-event simulation and public benchmarks are in docs/estimation.md
// ("Serving under load"); the names below follow that section.
#include "estimate/serving_load.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace cloudfit {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Probability that an arrival waits in an M/M/c queue with offered load a < c (Erlang C),
// through the numerically stable Erlang B recursion.
double ErlangC(int c, double a) {
  if (a <= 0) return 0;
  if (a >= c) return 1;
  // Far below the number of slots the probability is negligible (below 1e-12 for a < c/2 once
  // c >= 60), and the recursion is O(c): skip it.
  if (c >= 60 && a < 0.5 * c) return 0;
  double b = 1;
  for (int k = 1; k <= c; ++k) b = a * b / (k + a * b);
  double rho = a / c;
  return b / (1 - rho * (1 - b));
}

// A wait that is 0 with probability 1 - q and exponential with mean theta otherwise (the
// standard tail approximation of M/G/1 and M/G/c waits): its p-quantile.
double WaitQuantile(double q, double theta, double p) {
  if (q <= 1 - p || theta <= 0) return 0;
  return theta * std::log(q / (1 - p));
}

double OutputIterations(const ReplicaSteps& s) {
  // The prefill iteration emits the first output token; each later token takes an iteration.
  return std::max(0, s.output_tokens - 1);
}

// Sequences one tagged request shares its decode iterations with, itself included.
double Batch(const ReplicaSteps& s, double others) {
  return std::clamp(1 + others, 1.0, static_cast<double>(std::max(1, s.max_sequences)));
}

// Static and single-request engines: batches of up to max_sequences run to completion.
double BatchServiceSeconds(const ReplicaSteps& s, double batch) {
  double prefill = s.batch_prefill_s ? s.batch_prefill_s(batch) : s.prefill_s;
  return prefill + OutputIterations(s) * s.decode_step_s(batch);
}

LoadPoint EvaluateBatched(const ReplicaSteps& s, double rate, double p) {
  LoadPoint out;
  out.rate = rate;
  double cap = std::max(1, s.max_sequences);
  double saturation = SaturationRate(s);
  out.utilisation = rate / saturation;
  if (rate >= saturation) {
    out.stable = false;
    out.sequences = cap;
    out.ttft_s = out.ttft_median_s = out.queue_wait_s = kInfinity;
    out.tpot_s = out.tpot_median_s = s.decode_step_s(cap);
    return out;
  }
  double batch = 1;
  std::function<double(double)> wait;  // quantile of the wait before the own batch starts
  if (cap <= 1) {
    // One request at a time: M/D/1, Pollaczek-Khinchine mean wait with an exponential tail.
    double service = BatchServiceSeconds(s, 1);
    double busy = std::min(0.999999, rate * service);
    double theta = service / (2 * (1 - busy));
    wait = [=](double q) { return WaitQuantile(busy, theta, q); };
  } else {
    // A batch takes what waits when the server frees up: the k ~ Poisson(rate x S) requests
    // that arrived during the last batch, or, when none did, the next single arrival after an
    // idle spell: b = e^(-rate S) x 1 + (rate S), iterated from b = 1.
    for (int i = 0; i < 100; ++i) {
      double arrived = rate * BatchServiceSeconds(s, batch);
      double next = std::clamp(std::exp(-arrived) + arrived, 1.0, cap);
      if (std::abs(next - batch) < 1e-9) break;
      batch = next;
    }
    // An arrival waits for the batch in flight to end (uniform residual while busy); once
    // batches are full, full batches also queue (M/D/1 over batches of `cap`).
    double service = BatchServiceSeconds(s, batch);
    double busy = std::min(1.0, rate * service / batch);
    bool full = batch >= cap - 1e-6;
    double full_service = BatchServiceSeconds(s, cap);
    double full_busy = std::min(0.999999, rate * full_service / cap);
    double theta = full_service / (2 * (1 - full_busy));
    wait = [=](double q) {
      double residual = busy > 1 - q ? service * (1 - (1 - q) / busy) : 0;
      return residual + (full ? WaitQuantile(full_busy, theta, q) : 0);
    };
  }
  double prefill = s.batch_prefill_s ? s.batch_prefill_s(batch) : s.prefill_s;
  out.sequences = batch;
  out.queue_wait_s = wait(p);
  out.ttft_s = out.queue_wait_s + prefill;
  out.ttft_median_s = wait(0.5) + prefill;
  out.tpot_s = out.tpot_median_s = s.decode_step_s(batch);
  return out;
}

LoadPoint EvaluateContinuous(const ReplicaSteps& s, double rate, double p) {
  LoadPoint out;
  out.rate = rate;
  const double cap = std::max(1, s.max_sequences);
  const double decode_tokens = OutputIterations(s);
  const double prefill_work = s.prompt_tokens * s.prefill_token_s;  // GPU time per prompt
  double saturation = SaturationRate(s);
  out.utilisation = rate / saturation;
  if (rate >= saturation) {
    out.stable = false;
    out.sequences = cap;
    out.ttft_s = out.ttft_median_s = out.queue_wait_s = kInfinity;
    out.tpot_s = out.tpot_median_s = s.decode_step_s(cap);
    return out;
  }
  // Share of GPU time the prompts take; decode iterations stretch by 1 / (1 - that).
  const double prefill_share = std::min(0.999999, rate * prefill_work);
  // Mean sequences decoding, n = rate x (output tokens - 1) x tau(n) by Little's law, where the
  // interval between a sequence's tokens tau(n) = D(1 + n) / (1 - prefill share): the tagged
  // sequence decodes beside the n others a Poisson stream keeps in flight (M/D/infinity).
  auto interval = [&](double others) {
    return s.decode_step_s(Batch(s, others)) / (1 - prefill_share);
  };
  double lo = 0, hi = cap;
  for (int i = 0; i < 60 && hi - lo > 1e-6 * std::max(1.0, hi); ++i) {
    double mid = 0.5 * (lo + hi);
    if (rate * decode_tokens * interval(mid) > mid) lo = mid;
    else hi = mid;
  }
  const double n = 0.5 * (lo + hi);
  const double tau = interval(n);
  const double iteration = s.decode_step_s(Batch(s, n));

  // Own prefill: chunks of what the iteration's token budget leaves beside the decodes.
  double budget = std::max(1.0, s.chunk_tokens - n);
  double chunks = std::ceil(s.prompt_tokens / budget);
  double prefill_latency = chunks * iteration + prefill_work;

  // Waiting for a slot: c = max sequences servers, each held for prefill + decode; M/D/c by
  // the Allen-Cunneen correction of Erlang C (deterministic service halves the M/M/c wait).
  double hold = prefill_latency + decode_tokens * tau;
  double offered = rate * hold;
  double slots = cap;
  double q_slot = ErlangC(static_cast<int>(slots), offered);
  double theta_slot = offered < slots ? 0.5 * hold / (slots - offered) : kInfinity;
  // Waiting for a prefill turn: prompts go through the iterations' token budget one after
  // another (M/D/1). A prompt holds that budget for its own compute plus its share of the
  // iterations it rides in, so the prefill queue is busier than the prompts' GPU share alone.
  double prefill_service = prefill_work + s.prompt_tokens / budget * iteration;
  double prefill_busy = std::min(0.999999, rate * prefill_service);
  double theta_prefill = prefill_service / (2 * (1 - prefill_busy));
  // Waiting for the iteration in flight to end: uniform residual while the GPU is busy, and it
  // is busy while any request is in the system (M/G/infinity: empty with probability e^-load).
  double busy = 1 - std::exp(-offered);
  auto residual = [&](double q) {
    return busy > 1 - q ? iteration * (1 - (1 - q) / busy) : 0.0;
  };
  auto ttft = [&](double q) {
    return WaitQuantile(q_slot, theta_slot, q) + WaitQuantile(prefill_busy, theta_prefill, q) +
           residual(q);
  };
  out.sequences = n;
  out.queue_wait_s = ttft(p);
  out.ttft_s = out.queue_wait_s + prefill_latency;
  out.ttft_median_s = ttft(0.5) + prefill_latency;

  // Time per output token of one request: its mean interval, spread by (a) how many others
  // share its iterations over its life (for M/D/infinity their time-average over one lifetime
  // has variance 2n/3) and (b) how many prompts are prefilled during its life (Poisson).
  if (decode_tokens > 0) {
    double slope = s.decode_step_s(Batch(s, n + 1)) - iteration;
    double var_batch = slope * slope * (2 * n / 3) / ((1 - prefill_share) * (1 - prefill_share));
    double life = decode_tokens * tau;
    double per_token_stall = prefill_work / decode_tokens;
    // Prompts arrive at random but are prefilled in busy periods of the prefill queue, which
    // clusters the stalls: their count is over-dispersed by about 1 / (1 - its utilisation)^2
    // (the factor that matched the simulation best between 20% and 70% utilisation).
    double var_stalls = rate * life * per_token_stall * per_token_stall /
                        ((1 - prefill_busy) * (1 - prefill_busy));
    double sd = std::sqrt(var_batch + var_stalls);
    out.tpot_median_s = tau;
    out.tpot_s = tau + std::max(0.0, NormalQuantile(p)) * sd;
  }
  return out;
}

bool MeetsTargets(const LoadPoint& lp, std::optional<double> ttft, std::optional<double> tpot) {
  return lp.stable && (!ttft || lp.ttft_s <= *ttft) && (!tpot || lp.tpot_s <= *tpot);
}

}  // namespace

double SaturationRate(const ReplicaSteps& s) {
  double cap = std::max(1, s.max_sequences);
  if (s.policy != BatchingPolicy::kContinuous) return cap / BatchServiceSeconds(s, cap);
  // At the full batch every iteration carries cap sequences and the prompts' share of the GPU:
  // rate = cap / (decode iterations x D(cap) + cap x prompt time).
  double work = OutputIterations(s) * s.decode_step_s(cap) +
                cap * s.prompt_tokens * s.prefill_token_s;
  if (OutputIterations(s) == 0) work += s.decode_step_s(1);  // prefill-only requests
  return cap / work;
}

LoadPoint EvaluateLoad(const ReplicaSteps& steps, double rate, double percentile) {
  double p = std::clamp(percentile, 0.5, 0.999);
  if (steps.policy == BatchingPolicy::kContinuous) return EvaluateContinuous(steps, rate, p);
  return EvaluateBatched(steps, rate, p);
}

double MaxRateWithinTargets(const ReplicaSteps& steps, double percentile,
                            std::optional<double> ttft_target_s,
                            std::optional<double> tpot_target_s, double max_utilisation) {
  double saturation = SaturationRate(steps);
  double hi = max_utilisation * saturation;
  if (MeetsTargets(EvaluateLoad(steps, hi, percentile), ttft_target_s, tpot_target_s)) return hi;
  double lo = 1e-6 * saturation;
  if (!MeetsTargets(EvaluateLoad(steps, lo, percentile), ttft_target_s, tpot_target_s)) return 0;
  // Latencies grow with the rate: bisect to 0.1% of the saturation rate.
  while (hi - lo > 1e-3 * saturation) {
    double mid = 0.5 * (lo + hi);
    if (MeetsTargets(EvaluateLoad(steps, mid, percentile), ttft_target_s, tpot_target_s)) lo = mid;
    else hi = mid;
  }
  return lo;
}

double NormalQuantile(double p) {
  // Peter Acklam's algorithm (2003), as widely reproduced; relative error below 1.2e-9.
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                             -2.759285104469687e+02, 1.383577518672690e+02,
                             -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                             -1.556989798598866e+02, 6.680131188771972e+01,
                             -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                             -2.400758277161838e+00, -2.549732539343734e+00,
                             4.374664141464968e+00, 2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                             2.445134137142996e+00, 3.754408661907416e+00};
  p = std::clamp(p, 1e-12, 1 - 1e-12);
  const double low = 0.02425;
  if (p < low) {
    double q = std::sqrt(-2 * std::log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > 1 - low) return -NormalQuantile(1 - p);
  double q = p - 0.5;
  double r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

}  // namespace cloudfit

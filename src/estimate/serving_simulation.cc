// Discrete-event simulation of continuous batching (and of one-request-at-a-time engines).
#include "estimate/serving_simulation.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <random>
#include <vector>

namespace cloudfit {

namespace {

struct Request {
  int id = 0;
  double arrival_s = 0;
  int prefill_left = 0;
  int output_left = 0;
  double first_token_s = -1;
  int chunk = 0;  // prompt tokens in the current iteration
};

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(q * (v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

// Static batching: when the server frees up it takes up to `cap` waiting requests and runs the
// batch to completion (prefill together, then output - 1 decode steps at the batch's size).
SimulatedLoad SimulateStatic(const ReplicaSteps& steps, double rate, double percentile,
                             int requests, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(rate);
  const int cap = std::max(1, steps.max_sequences);
  const int warmup = requests / 10;
  std::vector<double> arrivals(requests);
  double t = 0;
  for (double& a : arrivals) a = (t += gap(rng));
  std::vector<double> ttfts, tpots;
  double free_at = 0, batch_area = 0, measure_from = arrivals[warmup], end = 0;
  for (int next = 0; next < requests;) {
    double start = std::max(free_at, arrivals[next]);
    int take = 0;
    while (next + take < requests && take < cap && arrivals[next + take] <= start) ++take;
    double prefill = steps.batch_prefill_s ? steps.batch_prefill_s(take) : steps.prefill_s;
    double service = prefill + std::max(0, steps.output_tokens - 1) * steps.decode_step_s(take);
    for (int i = next; i < next + take; ++i) {
      if (i < warmup) continue;
      ttfts.push_back(start + prefill - arrivals[i]);
      if (steps.output_tokens > 1) tpots.push_back(steps.decode_step_s(take));
    }
    if (start >= measure_from) batch_area += take * service;
    next += take;
    free_at = end = start + service;
  }
  SimulatedLoad out;
  double window = end - measure_from;
  out.mean_sequences = window > 0 ? batch_area / window : 0;
  out.ttft_s = Quantile(ttfts, percentile);
  out.ttft_median_s = Quantile(ttfts, 0.5);
  out.tpot_s = Quantile(tpots, percentile);
  out.tpot_median_s = Quantile(tpots, 0.5);
  out.completed_per_s = window > 0 ? ttfts.size() / window : 0;
  return out;
}

}  // namespace

SimulatedLoad SimulateLoad(const ReplicaSteps& steps, double rate, double percentile,
                           int requests, uint64_t seed) {
  if (steps.policy == BatchingPolicy::kStatic) {
    return SimulateStatic(steps, rate, percentile, requests, seed);
  }
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(rate);
  const int cap = std::max(1, steps.max_sequences);
  const int warmup = requests / 10;
  const bool single = steps.policy == BatchingPolicy::kSingle;
  double next_arrival = gap(rng);
  int generated = 0, finished = 0;
  std::deque<Request> waiting;
  std::vector<Request> running;
  std::vector<double> ttfts, tpots;
  double t = 0, measure_from = -1, decoding_area = 0;
  while (finished < requests) {
    while (generated < requests && next_arrival <= t) {
      Request r;
      r.id = generated++;
      r.arrival_s = next_arrival;
      r.prefill_left = steps.prompt_tokens;
      r.output_left = steps.output_tokens;
      if (r.id == warmup) measure_from = next_arrival;
      waiting.push_back(r);
      next_arrival += gap(rng);
    }
    if (running.empty() && waiting.empty()) {
      t = next_arrival;
      continue;
    }
    while (!waiting.empty() && static_cast<int>(running.size()) < cap) {
      running.push_back(waiting.front());
      waiting.pop_front();
    }
    int decoding = 0;
    for (const Request& r : running) decoding += r.prefill_left == 0;
    double budget = single ? std::numeric_limits<double>::infinity()
                           : std::max(0, steps.chunk_tokens - decoding);
    int prompt_tokens = 0;
    for (Request& r : running) {
      r.chunk = 0;
      if (r.prefill_left == 0 || budget <= 0) continue;
      r.chunk = static_cast<int>(std::min<double>(r.prefill_left, budget));
      budget -= r.chunk;
      prompt_tokens += r.chunk;
    }
    double dt = steps.decode_step_s(std::max(1, decoding)) + prompt_tokens * steps.prefill_token_s;
    if (measure_from >= 0 && t >= measure_from) decoding_area += decoding * dt;
    t += dt;
    for (Request& r : running) {
      if (r.prefill_left == 0) {
        --r.output_left;
      } else if (r.chunk > 0) {
        r.prefill_left -= r.chunk;
        if (r.prefill_left == 0) {
          r.first_token_s = t;
          --r.output_left;
        }
      }
    }
    auto done = std::stable_partition(running.begin(), running.end(),
                                      [](const Request& r) { return r.output_left > 0; });
    for (auto it = done; it != running.end(); ++it) {
      ++finished;
      if (it->id < warmup) continue;
      ttfts.push_back(it->first_token_s - it->arrival_s);
      if (steps.output_tokens > 1) {
        tpots.push_back((t - it->first_token_s) / (steps.output_tokens - 1));
      }
    }
    running.erase(done, running.end());
  }
  SimulatedLoad out;
  double window = t - std::max(0.0, measure_from);
  out.mean_sequences = window > 0 ? decoding_area / window : 0;
  out.ttft_s = Quantile(ttfts, percentile);
  out.ttft_median_s = Quantile(ttfts, 0.5);
  out.tpot_s = Quantile(tpots, percentile);
  out.tpot_median_s = Quantile(tpots, 0.5);
  out.completed_per_s = window > 0 ? ttfts.size() / window : 0;
  return out;
}

}  // namespace cloudfit

// Serving under load: what one copy of a model does when requests arrive at random (Poisson) at
// a given rate: the batch that load forms, time to first token and time per output token at a
// percentile, and the rate at which it saturates. A closed-form queueing model (documented in
// docs/estimation.md, "Serving under load") so that a recommendation can evaluate hundreds of
// candidates; serving_simulation.h holds the discrete-event simulation it is checked against.
#ifndef CLOUDFIT_ESTIMATE_SERVING_LOAD_H_
#define CLOUDFIT_ESTIMATE_SERVING_LOAD_H_

#include <functional>
#include <optional>

#include "cloudfit/serving_engine.h"

namespace cloudfit {

// The step physics of one model copy that the load model needs, in seconds.
struct ReplicaSteps {
  BatchingPolicy policy = BatchingPolicy::kContinuous;
  // One decode iteration with `sequences` decoding at once (>= 1): every sequence gets a token.
  std::function<double(double sequences)> decode_step_s;
  // Static batching: the prefill of a batch of `prompts` prompts.
  std::function<double(double prompts)> batch_prefill_s;
  double prefill_s = 0;  // one prompt alone: D(1) + prompt_tokens x prefill_token_s
  double prefill_token_s = 0;  // marginal time per prompt token inside an iteration
  int prompt_tokens = 1;
  int output_tokens = 1;
  int max_sequences = 1;  // admitted at once: the engine's cap and the KV cache
  int chunk_tokens = 2048;  // tokens one continuous-batching iteration carries
};

// One copy at one offered rate.
struct LoadPoint {
  double rate = 0;          // requests/s offered
  bool stable = true;       // false at or above saturation: the queue grows without bound
  double sequences = 0;     // mean sequences in decode: the batch the load forms
  double ttft_s = 0;        // at the percentile
  double tpot_s = 0;
  double ttft_median_s = 0;
  double tpot_median_s = 0;
  double queue_wait_s = 0;  // part of ttft_s spent waiting for a slot or a prefill turn
  double utilisation = 0;   // rate / saturation rate
};

// Requests/s at which the copy saturates (continuous batching at its full batch, or back-to-back
// batches for static and single-request engines).
double SaturationRate(const ReplicaSteps& steps);

// The copy at `rate` requests/s; latencies at `percentile` (0.5 to 0.999).
LoadPoint EvaluateLoad(const ReplicaSteps& steps, double rate, double percentile);

// The largest rate at which TTFT and TPOT at `percentile` stay within the targets (absent
// targets do not bind), at most `max_utilisation` x the saturation rate. 0 when an idle copy
// already misses a target.
double MaxRateWithinTargets(const ReplicaSteps& steps, double percentile,
                            std::optional<double> ttft_target_s,
                            std::optional<double> tpot_target_s, double max_utilisation);

// Standard normal quantile (Acklam's rational approximation, |error| < 1.2e-9).
double NormalQuantile(double p);

}  // namespace cloudfit

#endif  // CLOUDFIT_ESTIMATE_SERVING_LOAD_H_

// A discrete-event simulation of one serving copy under Poisson arrivals, iteration by
// iteration: admission up to the copy's sequence limit, chunked prefill inside the iteration's
// token budget, one token per decoding sequence per iteration (static batching: whole batches
// of what waits, up to the limit, run to completion). It reads the same ReplicaSteps
// as the closed form (serving_load.h) and exists to check that form's queueing approximations;
// it is too slow to run per recommendation candidate.
#ifndef CLOUDFIT_ESTIMATE_SERVING_SIMULATION_H_
#define CLOUDFIT_ESTIMATE_SERVING_SIMULATION_H_

#include <cstdint>

#include "estimate/serving_load.h"

namespace cloudfit {

struct SimulatedLoad {
  double mean_sequences = 0;  // time-average of sequences decoding
  double ttft_s = 0;          // at the percentile
  double tpot_s = 0;
  double ttft_median_s = 0;
  double tpot_median_s = 0;
  double completed_per_s = 0;
};

// Simulates `requests` arrivals at `rate` (the first 10% are warm-up and not counted), with a
// fixed seed so that results are reproducible. Static batching is simulated batch by batch.
SimulatedLoad SimulateLoad(const ReplicaSteps& steps, double rate, double percentile,
                           int requests, uint64_t seed);

}  // namespace cloudfit

#endif  // CLOUDFIT_ESTIMATE_SERVING_SIMULATION_H_

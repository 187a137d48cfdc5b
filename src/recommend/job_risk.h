// The expected cost in time of what can interrupt a job: spot capacity reclaimed, at the rate
// published for the provider and GPU class, and GPU failures, in every pricing mode. The job
// checkpoints at the interval that minimises the expected run time (Young 1974, Daly 2006) or
// not at all when checkpoints cost more than they save; each interruption loses the work since
// the last checkpoint and the time to restart.
#ifndef CLOUDFIT_RECOMMEND_JOB_RISK_H_
#define CLOUDFIT_RECOMMEND_JOB_RISK_H_

#include <string>

#include "cloudfit/recommend.h"

namespace cloudfit {

// GPU failures in large training runs: 419 unexpected interruptions in 54 days on 16,384 H100s,
// most of them GPU or HBM faults (Llama 3 paper, Dubey et al. 2024, section 3.3.4, table 5):
// one per 50,700 GPU-hours. Applied to every GPU, in every pricing mode.
inline constexpr double kGpuHoursPerFailure = 16384.0 * 54 * 24 / 419;
// Providers with no published spot rate for a GPU class get this monthly probability: the top
// bucket boundary of AWS's Spot Instance Advisor (">20%"), so unknown risk is not priced as none.
inline constexpr double kAssumedInterruptionsPerMonth = 0.2;
// Waiting for replacement spot capacity after an interruption when the provider publishes no
// figure (an assumption), on top of the node's start-up.
inline constexpr double kAssumedCapacityWaitMinutes = 10;
// Checkpoint write and read rate per node when the workload gives none: an AWS EBS gp3 volume's
// maximum, 1,000 MiB/s; nodes write their shards in parallel.
inline constexpr double kDefaultCheckpointBytesPerS = 1000.0 * 1024 * 1024;

struct SpotHazard {
  double interruptions_per_month = 0;  // per instance
  std::string basis;                   // "aws A100-SXM4-40GB 5-10% (Spot Instance Advisor, ...)"
  bool assumed = false;
};
// The spot interruption rate of one instance of `t`: the GPU class's row of
// data/costs/spot_rates.csv, else the provider's fallback row, else data/spot.csv's provider
// figure, else the assumed rate.
SpotHazard SpotHazardFor(const Catalog& catalog, const CostData& costs, const InstanceType& t,
                         bool with_basis = true);

struct RiskInput {
  double hazard_per_hour = 0;  // interruptions per hour that stop the job
  double state_bytes = 0;      // one checkpoint; 0 for work that restarts cheaply
  double write_bytes_per_s = kDefaultCheckpointBytesPerS;
  double read_bytes_per_s = kDefaultCheckpointBytesPerS;
  double job_hours = 0;        // the uninterrupted run
  double relaunch_hours = 0;   // replacement node to running again, before loading state
  double lost_unit_hours = 0;  // work lost per interruption without state (a frame)
};

// Expected overhead, checkpoint interval, restart time and interruption odds.
JobRisk ExpectedJobRisk(const RiskInput& in);

}  // namespace cloudfit

#endif  // CLOUDFIT_RECOMMEND_JOB_RISK_H_

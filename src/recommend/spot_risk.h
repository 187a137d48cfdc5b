// The expected cost of running on spot capacity: interruptions arrive at the provider's rate,
// the job checkpoints at the Young/Daly interval, and each interruption loses the work since the
// last checkpoint plus the time to restart.
#ifndef CLOUDFIT_RECOMMEND_SPOT_RISK_H_
#define CLOUDFIT_RECOMMEND_SPOT_RISK_H_

#include "cloudfit/recommend.h"

namespace cloudfit {

// Providers that publish no interruption rate get this monthly probability: the top bucket
// boundary of AWS's Spot Instance Advisor (">20%"), so unknown risk is not priced as none.
inline constexpr double kAssumedInterruptionsPerMonth = 0.2;
// Interruption to training again when the provider publishes no figure: provisioning a new
// instance, starting the container and loading the checkpoint. An assumption.
inline constexpr double kAssumedRestartMinutes = 10;
// Checkpoint write rate when the workload gives none: an AWS EBS gp3 volume's maximum,
// 1,000 MiB/s.
inline constexpr double kDefaultCheckpointBytesPerS = 1000.0 * 1024 * 1024;

// `state_bytes`: what a checkpoint writes (0 for work that restarts cheaply, like one frame);
// `job_hours`: the uninterrupted run time.
SpotRisk ExpectedSpotRisk(const SpotProfile* profile, double state_bytes, double bytes_per_s,
                          double job_hours, double lost_work_hours_per_interruption);

}  // namespace cloudfit

#endif  // CLOUDFIT_RECOMMEND_SPOT_RISK_H_

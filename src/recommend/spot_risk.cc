#include "recommend/spot_risk.h"

#include <algorithm>
#include <cmath>

namespace cloudfit {

namespace {
constexpr double kHoursPerMonth = 730;
}

SpotRisk ExpectedSpotRisk(const SpotProfile* profile, double state_bytes, double bytes_per_s,
                          double job_hours, double lost_work_hours_per_interruption) {
  SpotRisk r;
  double p = kAssumedInterruptionsPerMonth;
  if (profile != nullptr && profile->interruptions_per_month) {
    p = *profile->interruptions_per_month;
  } else {
    r.assumed_rate = true;
  }
  // A monthly probability p of at least one interruption is a constant hazard
  // -ln(1 - p) / 730 per hour; MTBF is its inverse.
  p = std::clamp(p, 1e-6, 0.999999);
  r.mtbf_hours = kHoursPerMonth / -std::log(1 - p);
  double restart_minutes = profile != nullptr && profile->restart_minutes
                               ? *profile->restart_minutes
                               : kAssumedRestartMinutes;
  r.restart_hours = restart_minutes / 60;
  r.checkpoint_seconds = state_bytes > 0 ? state_bytes / std::max(1.0, bytes_per_s) : 0;
  double c = r.checkpoint_seconds / 3600;
  double m = r.mtbf_hours;
  // Without checkpoints an interruption restarts the job from the beginning: with exponential
  // interruptions the expected time to finish H hours is (M + R)(e^(H/M) - 1).
  double from_scratch = job_hours > 0
                            ? (m + r.restart_hours) * std::expm1(job_hours / m) / job_hours - 1
                            : 0;
  if (state_bytes > 0) {
    // Young (1974) / Daly (2006): checkpoint every sqrt(2 C M); the expected waste is the
    // checkpoint time per interval, half an interval of lost work per interruption, and the
    // restart per interruption. When checkpoints cost more than they save, run without them.
    r.checkpoint_interval_hours = std::sqrt(2 * c * m);
    double interval = r.checkpoint_interval_hours;
    double with_checkpoints = c / interval + (interval / 2 + r.restart_hours) / m;
    if (interval >= job_hours || from_scratch <= with_checkpoints) {
      r.checkpoint_interval_hours = 0;
      r.overhead_fraction = from_scratch;
    } else {
      r.overhead_fraction = with_checkpoints;
    }
  } else {
    // Nothing to save: an interruption loses the unit of work in flight and the restart.
    r.overhead_fraction = (lost_work_hours_per_interruption / 2 + r.restart_hours) / m;
  }
  return r;
}

}  // namespace cloudfit

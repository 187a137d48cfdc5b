#include "recommend/job_risk.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cloudfit/table.h"

namespace cloudfit {

namespace {

// Beyond this many expected interruptions per run the exponentials below overflow; the run is
// hopeless anyway, so the overhead is capped.
constexpr double kMaxExponent = 50;

// Daly (2006), for exponentially distributed interruptions with mean M, checkpoint cost C and
// restart R: the expected wall time of W hours of work checkpointed every tau hours is
// M e^(R/M) (e^((tau + C)/M) - 1) W / tau. Without checkpoints, tau = W and C = 0.
double ExpectedWallHours(double work, double tau, double c, double r, double m) {
  double exponent = std::min(kMaxExponent, (tau + c) / m);
  return m * std::exp(std::min(kMaxExponent, r / m)) * std::expm1(exponent) * work / tau;
}

// Daly's higher-order optimum interval (equation 37): sqrt(2CM) [1 + sqrt(C/2M)/3 + C/(18M)] - C
// for C < 2M, else M.
double DalyInterval(double c, double m) {
  if (c >= 2 * m) return m;
  double x = c / (2 * m);
  return std::sqrt(2 * c * m) * (1 + std::sqrt(x) / 3 + x / 9) - c;
}

}  // namespace

SpotHazard SpotHazardFor(const Catalog& catalog, const CostData& costs, const InstanceType& t,
                         bool with_basis) {
  SpotHazard h;
  if (const SpotRate* rate = costs.FindSpotRate(t.provider, t)) {
    h.interruptions_per_month = rate->interruptions_per_month;
    h.assumed = rate->assumed;
    if (!with_basis) return h;
    std::string what = rate->gpu == "*gpu"   ? "GPU types"
                       : rate->gpu == "*cpu" ? "CPU types"
                                             : rate->gpu;
    h.basis = fmt::format("{} {} {}{} (data/costs/spot_rates.csv{})", t.provider, what,
                          rate->band.empty() ? "" : rate->band + ", ",
                          FormatNumber(100 * rate->interruptions_per_month, 0) + "%/month",
                          rate->as_of.empty() ? "" : ", " + rate->as_of);
    return h;
  }
  const SpotProfile* profile = catalog.FindSpotProfile(t.provider);
  if (profile != nullptr && profile->interruptions_per_month) {
    h.interruptions_per_month = *profile->interruptions_per_month;
    if (!with_basis) return h;
    h.basis = fmt::format("{} all types {}%/month (data/spot.csv)", t.provider,
                          FormatNumber(100 * h.interruptions_per_month, 0));
    return h;
  }
  h.interruptions_per_month = kAssumedInterruptionsPerMonth;
  h.assumed = true;
  if (!with_basis) return h;
  h.basis = fmt::format("{} publishes no rate: {}%/month assumed (AWS's top band)", t.provider,
                        FormatNumber(100 * kAssumedInterruptionsPerMonth, 0));
  return h;
}

JobRisk ExpectedJobRisk(const RiskInput& in) {
  JobRisk r;
  r.checkpoint_seconds =
      in.state_bytes > 0 ? in.state_bytes / std::max(1.0, in.write_bytes_per_s) : 0;
  double load_hours =
      in.state_bytes > 0 ? in.state_bytes / std::max(1.0, in.read_bytes_per_s) / 3600 : 0;
  r.restart_hours = in.relaunch_hours + load_hours;
  if (in.hazard_per_hour <= 0 || in.job_hours <= 0) return r;
  double m = 1 / in.hazard_per_hour;
  r.mtbf_hours = m;
  double w = in.job_hours;
  double c = r.checkpoint_seconds / 3600;
  double restart = r.restart_hours;
  if (in.state_bytes > 0) {
    double none = ExpectedWallHours(w, w, 0, restart, m);
    double tau = DalyInterval(c, m);
    double with = tau < w ? ExpectedWallHours(w, tau, c, restart, m) : none;
    if (tau >= w || none <= with) {
      r.overhead_fraction = none / w - 1;
    } else {
      r.checkpoint_interval_hours = tau;
      r.overhead_fraction = with / w - 1;
    }
  } else {
    // Nothing to save: an interruption loses the unit of work in flight and the restart.
    r.overhead_fraction = (in.lost_unit_hours / 2 + restart) / m;
  }
  double wall = w * (1 + r.overhead_fraction);
  r.expected_interruptions = wall / m;
  r.probability_interrupted = -std::expm1(-w / m);
  return r;
}

}  // namespace cloudfit

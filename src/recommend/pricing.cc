// The pricing stage: an estimate priced in every region and pricing mode the options allow, with
// the expected cost of spot interruptions, commitments paid for their whole term, GCP's
// sustained-use discount, cost per unit of work, and the deadline and budget constraints.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "cloudfit/table.h"
#include "recommend/recommender.h"
#include "recommend/spot_risk.h"
#include "util/strings.h"

namespace cloudfit {

namespace {

// What one unit of work is and how many there are, for cost per unit.
struct WorkUnits {
  std::string unit;
  double per_hour = 0;  // units produced per hour by the candidate
};

WorkUnits UnitsOf(const Workload& w, const Estimate& e) {
  WorkUnits u;
  double per_s = e.throughput;
  if (w.is_training() && w.dataset_samples > 0) {
    // Epochs: the estimate counts tokens for transformers, samples otherwise.
    double samples_per_s = e.throughput_unit == "tokens/s" ? per_s / std::max(1, w.seq_len) : per_s;
    u.unit = "epoch";
    u.per_hour = samples_per_s * 3600 / w.dataset_samples;
    return u;
  }
  if (e.throughput_unit == "tokens/s") {
    u.unit = "1M tokens";
    u.per_hour = per_s * 3600 / 1e6;
    if (w.kind == WorkloadKind::kServing) {
      // At the requested rate, not at capacity: that is what the fleet is paid for.
      u.per_hour = w.request_rate * w.output_tokens * 3600 / 1e6;
      return u;
    }
  } else if (e.throughput_unit == "frames/h") {
    u.unit = "frame";
    u.per_hour = e.throughput;
  } else if (e.throughput_unit == "GB/s") {
    u.unit = "GB";
    u.per_hour = per_s * 3600;
  } else if (e.throughput_unit == "streams") {
    u.unit = "stream-hour";
    u.per_hour = std::min<double>(w.streams, e.throughput);
  } else {
    u.unit = "1k samples";
    u.per_hour = per_s * 3600 / 1000;
  }
  return u;
}

// GCP's sustained-use discount on N1 machines and the GPUs attached to them: each quarter of
// the month is billed at a lower rate (data/discounts.csv documents the tiers and the source).
double SustainedUseFactor(const InstanceType& t, double hours_in_month) {
  if (t.provider != "gcp" || !StartsWith(ToLower(t.family), "n1")) return 1;
  static const double kTierStart[] = {0, 182.5, 365, 547.5};
  static const double kTierRate[] = {1.0, 0.8, 0.6, 0.4};
  double h = std::min(hours_in_month, 730.0);
  if (h <= 0) return 1;
  double billed = 0;
  for (int i = 0; i < 4; ++i) {
    double end = i < 3 ? kTierStart[i + 1] : 730;
    double in_tier = std::clamp(h - kTierStart[i], 0.0, end - kTierStart[i]);
    billed += in_tier * kTierRate[i];
  }
  return billed / h;
}

// Bytes a training checkpoint writes: weights and optimizer state of the whole model.
double CheckpointBytes(const Workload& w, const Estimate& e) {
  if (!w.is_training()) return 0;
  const Layout& l = e.layout;
  double shards = static_cast<double>(l.tensor_parallel) * l.pipeline_parallel *
                  (l.zero_stage >= 1 ? l.data_parallel : 1);
  return (e.memory.weights_bytes + e.memory.optimizer_bytes) * std::max(1.0, shards);
}

void PriceSpot(const RecommendContext& ctx, const InstanceType& t, const Estimate& est, int nodes,
               double hours, double fleet, Candidate* c, double* cost) {
  const Workload& w = ctx.workload;
  double lost_unit = est.render ? est.render->seconds_per_frame / 3600 : 0;
  double bytes_per_s = w.storage_gb_s ? *w.storage_gb_s * 1e9 : kDefaultCheckpointBytesPerS;
  (void)nodes;
  SpotRisk risk = ExpectedSpotRisk(ctx.catalog.FindSpotProfile(t.provider),
                                   CheckpointBytes(w, est), bytes_per_s, hours, lost_unit);
  c->spot = risk;
  if (ctx.priced_per_period()) {
    c->warnings.push_back(fmt::format(
        "spot capacity is reclaimed about every {:.0f} h: keep an on-demand floor of "
        "replicas for the latency target",
        risk.mtbf_hours));
    return;
  }
  c->hours = hours * (1 + risk.overhead_fraction);
  *cost = fleet * c->hours;
  std::string rate = risk.assumed_rate ? " (assumed: the provider publishes no rate)" : "";
  if (risk.checkpoint_interval_hours > 0) {
    c->reasons.push_back(fmt::format(
        "spot: +{:.1f}% expected time (MTBF {:.0f} h{}; checkpoint {:.0f} s every {:.1f} h "
        "by Young/Daly; restart {:.0f} min)",
        100 * risk.overhead_fraction, risk.mtbf_hours, rate, risk.checkpoint_seconds,
        risk.checkpoint_interval_hours, risk.restart_hours * 60));
  } else if (risk.checkpoint_seconds > 0) {
    c->reasons.push_back(fmt::format(
        "spot: +{:.1f}% expected time (MTBF {:.0f} h{}; a {:.0f} s checkpoint costs more "
        "than it saves on a {:.1f} h job, so an interruption restarts it; restart {:.0f} "
        "min)",
        100 * risk.overhead_fraction, risk.mtbf_hours, rate, risk.checkpoint_seconds, hours,
        risk.restart_hours * 60));
  } else {
    c->reasons.push_back(fmt::format(
        "spot: +{:.2f}% expected time (MTBF {:.0f} h{}; an interruption loses the work in "
        "flight and a {:.0f} min restart)",
        100 * risk.overhead_fraction, risk.mtbf_hours, rate, risk.restart_hours * 60));
  }
}

void PriceReserved(const RecommendContext& ctx, const RegionPrice& r, PricingMode mode,
                   double unit_price, double hours, double fleet, Candidate* c, double* cost) {
  // A commitment is paid for its whole term, used or not.
  double term = (mode == PricingMode::kReserved1y ? 1 : 3) * kHoursPerYear;
  *cost = fleet * std::max(hours, term);
  if (auto od = r.price(PricingMode::kOnDemand)) {
    double od_fleet = 0;
    ctx.catalog.Convert(*od, r.currency, ctx.options.currency, &od_fleet).ok();
    c->break_even_utilisation = unit_price / od_fleet;
    c->reasons.push_back(fmt::format(
        "{}: pays for {:.0f} h of the term; cheaper than on-demand only above {:.0f}% "
        "utilisation",
        PricingModeName(mode), term, 100 * *c->break_even_utilisation));
  }
  if (hours < term) {
    c->warnings.push_back(fmt::format("the job uses {:.0f} of the {:.0f} committed hours",
                                      hours, term));
  }
}

Candidate Price(const RecommendContext& ctx, const InstanceType& t, const RegionPrice& r,
                PricingMode mode, int nodes, int replicas, double hours,
                const std::shared_ptr<const Estimate>& e) {
  const Workload& w = ctx.workload;
  const RecommendOptions& o = ctx.options;
  const Estimate& est = *e;
  Candidate c;
  c.instance = &t;
  c.region = &r;
  c.mode = mode;
  c.nodes = nodes;
  c.replicas = replicas;
  c.estimate = e;
  double unit_price = 0;
  ctx.catalog.Convert(*r.price(mode), r.currency, o.currency, &unit_price).ok();
  double fleet = unit_price * nodes * replicas;
  c.price_per_hour = fleet;
  c.hours = hours;
  const std::string& cur = o.currency;
  double cost = fleet * hours;
  if (mode == PricingMode::kOnDemand) {
    double factor = SustainedUseFactor(t, hours);
    if (factor < 1) {
      cost *= factor;
      c.reasons.push_back(fmt::format("GCP sustained-use discount: {:.0f}% off for {:.0f} h in a month",
                                      100 * (1 - factor), std::min(hours, 730.0)));
    }
  } else if (mode == PricingMode::kSpot) {
    PriceSpot(ctx, t, est, nodes, hours, fleet, &c, &cost);
  } else {
    PriceReserved(ctx, r, mode, unit_price, hours, fleet, &c, &cost);
  }
  c.total_cost = cost;
  WorkUnits u = UnitsOf(w, est);
  c.unit = u.unit;
  if (u.per_hour > 0) {
    // The estimate's throughput is already that of all the nodes; interruptions stretch the
    // hours, not the work.
    double units = u.per_hour * hours;
    if (units > 0) c.cost_per_unit = cost / units;
  }
  PlanServing(ctx, est, &c);
  // Constraints.
  if (o.deadline_hours && c.hours > *o.deadline_hours && w.kind != WorkloadKind::kServing) {
    c.rejection = fmt::format("misses the deadline: {:.1f} h > {:.1f} h", c.hours,
                              *o.deadline_hours);
  } else if (o.budget && cost > *o.budget) {
    c.rejection = fmt::format("over budget: {} > {}", Money(cost, cur), Money(*o.budget, cur));
  }
  ExplainCandidate(ctx, t, r, est, &c);
  return c;
}

}  // namespace

void PriceCandidates(const RecommendContext& ctx, const InstanceType& t, int nodes,
                     const std::shared_ptr<const Estimate>& e, Recommendation* out) {
  const Workload& w = ctx.workload;
  const RecommendOptions& o = ctx.options;
  const Estimate& est = *e;
  int replicas = 1;
  if (est.serving) replicas = std::max(1, est.serving->replicas);
  if (w.kind == WorkloadKind::kRealtimeRender || w.kind == WorkloadKind::kCad) {
    replicas = static_cast<int>(std::ceil(w.streams / std::max(1.0, est.throughput)));
  }
  double hours = ctx.priced_per_period() ? o.serving_hours : est.total_s / 3600;
  if (o.fixed_hours) hours = *o.fixed_hours;
  for (const RegionPrice& r : t.regions) {
    if (!AnyOf(o.regions, r.region)) continue;
    bool priced = false;
    for (PricingMode mode : o.pricing) {
      if (!r.price(mode)) continue;
      priced = true;
      Candidate c = Price(ctx, t, r, mode, nodes, replicas, hours, e);
      if (c.feasible()) out->ranked.push_back(std::move(c));
      else out->rejected.push_back(std::move(c));
    }
    if (!priced) {
      std::vector<std::string> modes;
      for (PricingMode m : o.pricing) modes.emplace_back(PricingModeName(m));
      AddRejection(out, t, &r, nodes, "price unknown (" + Join(modes, ", ") + ")", e);
    }
  }
}

}  // namespace cloudfit

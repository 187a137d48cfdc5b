// The pricing stage: an estimate priced in every region and pricing mode the options allow. The
// run's hours carry the expected cost of interruptions (spot capacity reclaimed, GPU failures)
// and each node's start-up; the bill is a list of lines (compute, egress, storage, start-up,
// minimum billing, licences), commitments are paid for their whole term, GCP's sustained-use
// discount applies, and the deadline and budget constraints are checked on the totals.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cloudfit/table.h"
#include "recommend/job_risk.h"
#include "recommend/recommender.h"
#include "util/strings.h"

namespace cloudfit {

namespace {

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
  } else if (e.throughput_unit == "rows/s") {
    u.unit = "1M rows";
    u.per_hour = per_s * 3600 / 1e6;
  } else {
    u.unit = "1k samples";
    u.per_hour = per_s * 3600 / 1000;
  }
  return u;
}

// GCP's sustained-use discount on N1 machines and the GPUs attached to them: each quarter of
// the month is billed at a lower rate (data/discounts.csv documents the tiers and the source).
bool HasSustainedUseDiscount(const InstanceType& t) {
  return t.provider == "gcp" && StartsWith(ToLower(t.family), "n1");
}

double SustainedUseFactor(double hours_in_month) {
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

// The start-up line's bit in RecommendContext::excluded_cost_lines (OptionalCostLines order).
constexpr unsigned kStartupLine = 1u << 2;

// The risk of a job run: spot interruptions (spot mode) and GPU failures (every mode). Nodes of
// a synchronous job (training) stop together; independent ones (frames, files) do not.
JobRisk RiskOf(const RecommendContext& ctx, const InstanceType& t, const Estimate& est,
               PricingMode mode, int nodes, double job_hours, double startup_hours, bool describe) {
  const Workload& w = ctx.workload;
  bool synchronous = w.is_training();
  double stopping_nodes = synchronous ? nodes : 1;
  RiskInput in;
  in.job_hours = job_hours;
  in.state_bytes = CheckpointBytes(w, est);
  double rate = w.storage_gb_s ? *w.storage_gb_s * 1e9 : kDefaultCheckpointBytesPerS * nodes;
  in.write_bytes_per_s = in.read_bytes_per_s = rate;
  in.lost_unit_hours = est.render ? est.render->seconds_per_frame / 3600 : 0;
  in.relaunch_hours = startup_hours;
  SpotHazard spot;
  if (mode == PricingMode::kSpot) {
    spot = SpotHazardFor(ctx.catalog, ctx.costs, t, describe);
    const SpotProfile* profile = ctx.catalog.FindSpotProfile(t.provider);
    double wait = profile && profile->restart_minutes ? *profile->restart_minutes
                                                      : kAssumedCapacityWaitMinutes;
    in.relaunch_hours += wait / 60;
    // A monthly probability p of an interruption is a constant hazard -ln(1 - p) / 730 per hour.
    double p = std::clamp(spot.interruptions_per_month, 0.0, 0.999999);
    in.hazard_per_hour += stopping_nodes * -std::log1p(-p) / 730;
  }
  double gpus = t.gpu_count * stopping_nodes;
  if (gpus > 0) in.hazard_per_hour += gpus / kGpuHoursPerFailure;
  JobRisk r = ExpectedJobRisk(in);
  r.nodes = nodes;
  r.synchronous = synchronous;
  r.spot_interruptions_per_month = spot.interruptions_per_month;
  r.rate_basis = spot.basis;
  r.assumed_rate = spot.assumed;
  r.hardware_mtbf_hours = gpus > 0 ? kGpuHoursPerFailure / gpus : 0;
  return r;
}

// "12", "3.4", "0.012": whole percent from 10, two significant digits below.
std::string Percent(double fraction) {
  double p = 100 * fraction;
  return p >= 10 ? fmt::format("{:.0f}", p) : fmt::format("{:.2g}", p);
}

// Reasons go to the candidate; warnings to `warnings`, appended after the candidate's own.
void ExplainRisk(const JobRisk& r, PricingMode mode, double job_hours, Candidate* c,
                 std::vector<std::string>* warnings) {
  std::string sources =
      mode == PricingMode::kSpot
          ? fmt::format("spot {}{}", r.rate_basis,
                        r.synchronous && r.nodes > 1 ? fmt::format(" x {} nodes", r.nodes) : "")
          : "";
  if (r.hardware_mtbf_hours > 0) {
    if (!sources.empty()) sources += "; ";
    sources += fmt::format("GPU failures 1 per {} GPU-hours (Llama 3)",
                           FormatNumber(kGpuHoursPerFailure, 0));
  }
  if (r.mtbf_hours <= 0 || (mode != PricingMode::kSpot && r.overhead_fraction < 0.001 &&
                            r.checkpoint_interval_hours == 0)) {
    return;
  }
  std::string label = mode == PricingMode::kSpot ? "spot" : "interruptions";
  std::string plan;
  if (r.checkpoint_interval_hours > 0) {
    plan = fmt::format("checkpoint {:.0f} s every {:.1f} h by Young/Daly", r.checkpoint_seconds,
                       r.checkpoint_interval_hours);
  } else if (r.checkpoint_seconds > 0) {
    plan = fmt::format(
        "a {:.0f} s checkpoint costs more than it saves on a {:.1f} h run, so an "
        "interruption restarts it",
        r.checkpoint_seconds, job_hours);
  } else {
    plan = "an interruption loses the work in flight";
  }
  c->reasons.push_back(fmt::format(
      "{}: +{}% expected time; {}% chance of at least one interruption (MTBF {} h: {}); "
      "{}; restart {:.0f} min",
      label, Percent(r.overhead_fraction), Percent(r.probability_interrupted),
      FormatNumber(r.mtbf_hours, 0), sources, plan, r.restart_hours * 60));
  if (mode == PricingMode::kSpot && r.synchronous && r.nodes > 1) {
    warnings->push_back(fmt::format(
        "spot on {} nodes: reclaiming any one stops all of them ({:.1f} interruptions expected)",
        r.nodes, r.expected_interruptions));
  }
  if (r.assumed_rate && mode == PricingMode::kSpot) {
    warnings->push_back("spot interruption rate assumed: " + r.rate_basis);
  }
}

// The hours a commitment in `mode` is paid for, used or not.
double CommittedHours(PricingMode mode) {
  return (mode == PricingMode::kReserved1y ? 1 : 3) * kHoursPerYear;
}

void ExplainReserved(const PricedOffer& offer, Candidate* c) {
  double term = CommittedHours(offer.mode);
  if (offer.break_even_utilisation) {
    c->reasons.push_back(
        fmt::format("{}: pays for {:.0f} h of the term; cheaper than on-demand only above {:.0f}% "
                    "utilisation",
                    PricingModeName(offer.mode), term, 100 * *offer.break_even_utilisation));
  }
  if (offer.compute_hours < term) {
    c->warnings.push_back(fmt::format("the job uses {:.0f} of the {:.0f} committed hours",
                                      offer.compute_hours, term));
  }
}

// Concurrent sessions a streaming candidate carries (real time and CAD).
double Sessions(const Workload& w) {
  return w.kind == WorkloadKind::kRealtimeRender || w.kind == WorkloadKind::kCad ? w.streams : 0;
}

PricedRun RunOf(const RecommendContext& ctx, const Estimate& est) {
  const Workload& w = ctx.workload;
  const RecommendOptions& o = ctx.options;
  PricedRun run;
  if (est.serving) run.replicas = std::max(1, est.serving->replicas);
  if (w.kind == WorkloadKind::kRealtimeRender || w.kind == WorkloadKind::kCad) {
    run.replicas = static_cast<int>(std::ceil(w.streams / std::max(1.0, est.throughput)));
  }
  run.hours = ctx.priced_per_period() ? o.serving_hours : est.total_s / 3600;
  if (o.fixed_hours) run.hours = *o.fixed_hours;
  return run;
}

}  // namespace

OfferBasis::OfferBasis(const RecommendContext& ctx, const InstanceType& type, int node_count,
                       const std::shared_ptr<const Estimate>& e)
    : t(type), nodes(node_count), estimate(e), run(RunOf(ctx, *e)) {
  const Workload& w = ctx.workload;
  if ((ctx.excluded_cost_lines & kStartupLine) == 0) startup = EstimateStartup(w, t);
  startup_hours = startup.total_s() / 3600;
  checkpoint_bytes = CheckpointBytes(w, *e);
  units = UnitsOf(w, *e);
  missing_licence = MissingLicence(ctx.costs, w, t);
  sustained_use = HasSustainedUseDiscount(t);
  rows = ctx.BillRowsFor(t.provider);
}

const JobRisk& OfferBasis::Risk(const RecommendContext& ctx, PricingMode mode) {
  std::optional<JobRisk>& r = mode == PricingMode::kSpot ? spot_risk : other_risk;
  if (!r) r = RiskOf(ctx, t, *estimate, mode, nodes, run.hours, startup_hours, false);
  return *r;
}

namespace {

// What the bill of an offer is made of beyond compute, for the numbers and the worded bill alike.
JobBillInput BillInputOf(const RecommendContext& ctx, const PricedOffer& offer) {
  const OfferBasis& basis = *offer.basis;
  JobBillInput bill;
  bill.instance = &basis.t;
  bill.mode = offer.mode;
  bill.nodes = basis.nodes;
  bill.replicas = basis.run.replicas;
  bill.node_price_per_hour = offer.unit_price;
  bill.hours = offer.compute_hours;
  bill.starts = offer.expected_starts;
  bill.checkpoint_bytes = basis.checkpoint_bytes;
  bill.sessions = Sessions(ctx.workload);
  bill.startup = basis.startup;
  bill.rows = &basis.rows;
  bill.with_text = false;  // DescribeOffer words the bills shown
  return bill;
}

// One offer priced, numbers only: hours with the expected interruptions, the bill's total, cost
// per unit and the first constraint it fails.
PricedOffer PriceOffer(const RecommendContext& ctx, OfferBasis* basis, const RegionPrice& r,
                       PricingMode mode) {
  const Workload& w = ctx.workload;
  const RecommendOptions& o = ctx.options;
  PricedOffer offer;
  offer.basis = basis;
  offer.region = &r;
  offer.mode = mode;
  offer.unit_price = ctx.ToRequestCurrency(*r.price(mode), r.currency);
  offer.price_per_hour = offer.unit_price * basis->nodes * basis->run.replicas;
  // Interruptions stretch a job; a service or a fixed number of hours is priced as asked.
  const double base_hours = basis->run.hours;
  offer.compute_hours = base_hours;
  if (!ctx.priced_per_period() && !o.fixed_hours) {
    const JobRisk& risk = basis->Risk(ctx, mode);
    offer.compute_hours = base_hours * (1 + risk.overhead_fraction);
    offer.expected_starts += risk.expected_interruptions;
  }
  // A service runs for its period; start-up is billed (its own line) within it.
  offer.hours =
      ctx.priced_per_period() ? offer.compute_hours : offer.compute_hours + basis->startup_hours;
  offer.compute = offer.price_per_hour * offer.compute_hours;
  if (mode == PricingMode::kOnDemand) {
    double factor = basis->sustained_use ? SustainedUseFactor(offer.compute_hours) : 1;
    if (factor < 1) offer.compute *= factor;
  } else if (mode != PricingMode::kSpot) {
    offer.compute = offer.price_per_hour * std::max(offer.compute_hours, CommittedHours(mode));
    if (auto od = r.price(PricingMode::kOnDemand)) {
      offer.break_even_utilisation = offer.unit_price / ctx.ToRequestCurrency(*od, r.currency);
    }
  }
  // The total adds the lines in bill order, compute first; what does not change with the price
  // is worked out once per mode.
  std::optional<JobCostParts>& parts = basis->cost_parts[static_cast<int>(mode)];
  if (!parts) {
    parts = JobCostPartsOf(ctx.costs, w, BillInputOf(ctx, offer), ctx.excluded_cost_lines);
  }
  offer.total = AddJobCostAmounts(*parts, offer.unit_price, offer.compute);
  const WorkUnits& u = basis->units;
  if (u.per_hour > 0) {
    // The estimate's throughput is already that of all the nodes; interruptions stretch the
    // hours, not the work.
    double units = u.per_hour * base_hours;
    if (units > 0) offer.cost_per_unit = offer.total / units;
  }
  if (!basis->missing_licence.empty()) {
    offer.rejection = OfferRejection::kMissingLicence;
  } else if (mode == PricingMode::kSpot && w.is_training() && basis->nodes > o.max_spot_nodes) {
    offer.rejection = OfferRejection::kSpotNodes;
  } else if (o.deadline_hours && offer.hours > *o.deadline_hours && !ctx.priced_per_period()) {
    offer.rejection = OfferRejection::kDeadline;
  } else if (o.budget && offer.total > *o.budget) {
    offer.rejection = OfferRejection::kBudget;
  }
  return offer;
}

std::string RejectionReason(const RecommendContext& ctx, const PricedOffer& offer) {
  const RecommendOptions& o = ctx.options;
  const std::string& cur = o.currency;
  const int nodes = offer.basis->nodes;
  switch (offer.rejection) {
    case OfferRejection::kNone:
      return "";
    case OfferRejection::kMissingLicence:
      return offer.basis->missing_licence;
    case OfferRejection::kSpotNodes:
      return fmt::format(
          "spot for a tightly coupled job on {} nodes: every reclaim stops all of them and {} "
          "spot nodes at once are not guaranteed (AWS advises against spot for tightly coupled "
          "workloads; --max-spot-nodes {})",
          nodes, nodes, o.max_spot_nodes);
    case OfferRejection::kDeadline:
      return fmt::format("misses the deadline: {:.1f} h > {:.1f} h", offer.hours,
                         *o.deadline_hours);
    case OfferRejection::kBudget:
      return fmt::format("over budget: {} > {}", Money(offer.total, cur), Money(*o.budget, cur));
  }
  return "";
}

// The candidate's numbers, as the offer priced them.
void FillNumbers(const RecommendContext& ctx, const PricedOffer& offer, Candidate* out) {
  const OfferBasis& basis = *offer.basis;
  Candidate& c = *out;
  c.instance = &basis.t;
  c.region = offer.region;
  c.mode = offer.mode;
  c.nodes = basis.nodes;
  c.replicas = basis.run.replicas;
  c.estimate = basis.estimate;
  c.price_per_hour = offer.price_per_hour;
  if (!ctx.priced_per_period() && !ctx.options.fixed_hours) {
    c.risk = basis.PricedRisk(offer.mode);
    if (offer.mode == PricingMode::kSpot) c.spot = c.risk;
  }
  c.hours = offer.hours;
  c.break_even_utilisation = offer.break_even_utilisation;
  c.total_cost = offer.total;
  c.unit = basis.units.unit;
  c.cost_per_unit = offer.cost_per_unit;
  PlanServing(ctx, *basis.estimate, false, &c);
  c.rejection = RejectionReason(ctx, offer);
}

// The reasons, warnings and worded bill of a priced offer whose numbers are in `c`, from the
// same numbers.
void DescribeOffer(const RecommendContext& ctx, const PricedOffer& offer, Candidate* out) {
  const Workload& w = ctx.workload;
  const RecommendOptions& o = ctx.options;
  const OfferBasis& basis = *offer.basis;
  const InstanceType& t = basis.t;
  const RegionPrice& r = *offer.region;
  const Estimate& est = *basis.estimate;
  const PricingMode mode = offer.mode;
  const std::string& cur = o.currency;
  Candidate& c = *out;
  c.described = true;
  std::vector<std::string> later_warnings;
  if (!ctx.priced_per_period() && !o.fixed_hours) {
    // The same risk as the numbers', with the words of its sources.
    JobRisk risk =
        RiskOf(ctx, t, est, mode, basis.nodes, basis.run.hours, basis.startup_hours, true);
    ExplainRisk(risk, mode, basis.run.hours, &c, &later_warnings);
    c.risk = risk;
    if (mode == PricingMode::kSpot) c.spot = risk;
  } else if (mode == PricingMode::kSpot && ctx.priced_per_period()) {
    SpotHazard h = SpotHazardFor(ctx.catalog, ctx.costs, t);
    later_warnings.push_back(fmt::format(
        "spot capacity is reclaimed (about {}%/month per instance, {}): keep an on-demand floor "
        "of replicas for the latency target",
        FormatNumber(100 * h.interruptions_per_month, 0), h.basis));
  }
  std::string compute_detail = fmt::format(
      "{} x {} h at {}/h", FormatNumber(basis.nodes * basis.run.replicas, 0) + " node(s)",
      FormatNumber(offer.compute_hours, 2), Money(offer.unit_price, cur));
  if (mode == PricingMode::kOnDemand) {
    double factor = basis.sustained_use ? SustainedUseFactor(offer.compute_hours) : 1;
    if (factor < 1) {
      compute_detail += fmt::format(", GCP sustained-use discount {:.0f}%", 100 * (1 - factor));
      c.reasons.push_back(
          fmt::format("GCP sustained-use discount: {:.0f}% off for {:.0f} h in a month",
                      100 * (1 - factor), std::min(offer.compute_hours, 730.0)));
    }
  } else if (mode != PricingMode::kSpot) {
    ExplainReserved(offer, &c);
    compute_detail += ", whole term";
  }
  // The bill line by line: the same amounts, in the same order, as the offer's total.
  JobBillInput bill = BillInputOf(ctx, offer);
  bill.with_text = true;
  double total = offer.compute;
  c.costs.reserve(6);  // compute and the five optional lines
  c.costs.push_back(
      {"compute", offer.compute, compute_detail,
       fmt::format("{} {} {} ({})", t.provider, r.region, PricingModeName(mode), r.source)});
  ForEachJobCostLine(ctx.catalog, ctx.costs, w, bill, o.excluded_costs, [&](CostLine&& line) {
    if (line.amount) {
      total += *line.amount;
      if (line.detail.find(": assumed, ") != std::string::npos) {
        c.warnings.push_back(line.name + " priced at the highest known rate: " +
                             line.detail.substr(line.detail.find(": assumed, ") + 11));
      }
    } else {
      c.warnings.push_back(fmt::format("{} not in the total: {}", line.name, line.detail));
    }
    c.costs.push_back(std::move(line));
  });
  double extras = total - offer.compute;
  if (offer.compute > 0 && extras > 0.25 * offer.compute) {
    c.reasons.push_back(fmt::format("beyond compute the bill adds {} ({:.0f}% of compute)",
                                    Money(extras, cur), 100 * extras / offer.compute));
  }
  PlanServing(ctx, est, true, &c);
  ExplainCandidate(ctx, t, r, est, &c);
  c.warnings.insert(c.warnings.end(), later_warnings.begin(), later_warnings.end());
}

}  // namespace

Candidate MakeCandidate(const RecommendContext& ctx, const PricedOffer& offer, bool describe) {
  Candidate c;
  MakeCandidateIn(ctx, offer, describe, &c);
  return c;
}

void MakeCandidateIn(const RecommendContext& ctx, const PricedOffer& offer, bool describe,
                     Candidate* c) {
  FillNumbers(ctx, offer, c);
  if (describe) DescribeOffer(ctx, offer, c);
}

void PriceCandidates(const RecommendContext& ctx, const InstanceType& t, int nodes,
                     const std::shared_ptr<const Estimate>& e, PricedOffers* offers,
                     Recommendation* out) {
  const RecommendOptions& o = ctx.options;
  OfferBasis* basis = &offers->bases.emplace_back(ctx, t, nodes, e);
  for (const RegionPrice& r : t.regions) {
    if (!AnyOf(o.regions, r.region)) continue;
    bool priced = false;
    for (PricingMode mode : o.pricing) {
      if (!r.price(mode)) continue;
      priced = true;
      PricedOffer offer = PriceOffer(ctx, basis, r, mode);
      if (offer.feasible()) {
        offers->feasible.push_back(offer);
      } else {
        out->rejected.push_back(MakeCandidate(ctx, offer, ctx.describe_all));
      }
    }
    if (!priced) AddRejection(out, t, &r, nodes, ctx.PriceUnknownReason(), e);
  }
}

const std::string& RecommendContext::PriceUnknownReason() const {
  if (price_unknown_reason_.empty()) {
    std::vector<std::string> modes;
    for (PricingMode m : options.pricing) modes.emplace_back(PricingModeName(m));
    price_unknown_reason_ = "price unknown (" + Join(modes, ", ") + ")";
  }
  return price_unknown_reason_;
}

std::shared_ptr<const Candidate> CandidatePass::FindDescribed(const OfferKey& key) const {
  std::lock_guard<std::mutex> lock(described_mutex_);
  auto it = described_.find(key);
  return it == described_.end() ? nullptr : it->second;
}

void CandidatePass::KeepDescribed(const OfferKey& key, const Candidate& described) const {
  std::lock_guard<std::mutex> lock(described_mutex_);
  if (described_.size() < kMaxDescribed) {
    described_.emplace(key, std::make_shared<const Candidate>(described));
  }
}

void DescribeCandidate(const RecommendContext& ctx, Candidate* c) {
  if (c->described || c->region == nullptr || !c->estimate) return;
  // Whether it is on the Pareto front is the one thing the answer, not the offer, decides.
  const bool pareto = c->pareto;
  const CandidatePass::OfferKey key{c->instance, c->region, c->estimate.get(), c->nodes, c->mode};
  if (ctx.pass) {
    if (std::shared_ptr<const Candidate> kept = ctx.pass->FindDescribed(key)) {
      *c = *kept;
      c->pareto = pareto;
      return;
    }
  }
  OfferBasis basis(ctx, *c->instance, c->nodes, c->estimate);
  *c = MakeCandidate(ctx, PriceOffer(ctx, &basis, *c->region, c->mode), true);
  if (ctx.pass) {
    c->text = std::make_shared<CandidateText>();
    ctx.pass->KeepDescribed(key, *c);
  }
  c->pareto = pareto;
}

}  // namespace cloudfit

// The recommender: estimates each instance type once per node count, prices it in every
// region and pricing mode, applies the constraints, ranks, and explains.
#include "cloudfit/recommend.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "cloudfit/catalog_info.h"
#include "cloudfit/table.h"
#include "recommend/spot_risk.h"
#include "util/date.h"
#include "util/strings.h"

namespace cloudfit {

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;
constexpr double kHoursPerYear = 8760;
constexpr double kHeadroomWarning = 0.10;  // less free GPU memory than this is fragile

bool AnyOf(const std::vector<std::string>& wanted, const std::string& value) {
  if (wanted.empty()) return true;
  std::string key = ToLower(value);
  return std::any_of(wanted.begin(), wanted.end(),
                     [&](const std::string& w) { return ToLower(w) == key; });
}

std::string Money(double amount, const std::string& currency) {
  return fmt::format("{} {}", FormatNumber(amount, amount < 10 ? 2 : 0), currency);
}

// What one unit of work is and how many there are, for cost per unit.
struct WorkUnits {
  std::string unit;
  double per_hour = 0;  // units produced per hour by the candidate
};

WorkUnits UnitsOf(const Workload& w, const Estimate& e, int nodes_or_replicas) {
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
  (void)nodes_or_replicas;
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

class Recommender {
 public:
  Recommender(const Catalog& catalog, const Workload& w, const RecommendOptions& o)
      : catalog_(catalog), w_(w), o_(o) {}

  Status Validate() {
    if (!catalog_.FindCurrency(o_.currency)) {
      return Status::InvalidArgument("--currency: '" + o_.currency + "' has no rate");
    }
    if (o_.deadline_hours && *o_.deadline_hours <= 0) {
      return Status::InvalidArgument("--deadline-hours: must be above 0");
    }
    if (o_.budget && *o_.budget <= 0) return Status::InvalidArgument("--budget: must be above 0");
    if (o_.min_gpus && o_.max_gpus && *o_.min_gpus > *o_.max_gpus) {
      return Status::InvalidArgument("--min-gpus: above --max-gpus");
    }
    if (o_.fixed_hours && (*o_.fixed_hours <= 0 || *o_.fixed_hours > 1e6)) {
      return Status::InvalidArgument("--hours: must be in (0, 1000000]");
    }
    if (o_.max_nodes < 1 || o_.max_nodes > 1024) {
      return Status::InvalidArgument("--max-nodes: must be in [1, 1024]");
    }
    if (o_.pricing.empty()) return Status::InvalidArgument("--pricing: give at least one mode");
    std::set<std::string> providers, regions;
    for (const InstanceType& t : catalog_.instances()) {
      providers.insert(t.provider);
      for (const RegionPrice& r : t.regions) regions.insert(r.region);
    }
    Status s = CheckNames(o_.providers, providers, "provider");
    if (s.ok()) s = CheckNames(o_.regions, regions, "region");
    for (const std::string& g : o_.gpus) {
      const Accelerator* a = nullptr;
      if (s.ok() && !(s = catalog_.FindAccelerator(g, &a)).ok()) s = Status::InvalidArgument("--gpu: " + s.message());
      if (a) include_gpus_.insert(a);
    }
    for (const std::string& g : o_.exclude_gpus) {
      const Accelerator* a = nullptr;
      if (s.ok() && !(s = catalog_.FindAccelerator(g, &a)).ok()) {
        s = Status::InvalidArgument("--exclude-gpu: " + s.message());
      }
      if (a) exclude_gpus_.insert(a);
    }
    for (const std::string& name : o_.instances) {
      const InstanceType* t = nullptr;
      if (s.ok() && !(s = catalog_.FindInstance(name, &t)).ok()) {
        s = Status::InvalidArgument("--instance: " + s.message());
      }
    }
    return s;
  }

  void Run(Recommendation* out) {
    today_ = TodayDays();
    for (const InstanceType& t : catalog_.instances()) Consider(t, out);
    Rank(out);
    Notes(out);
  }

 private:
  static Status CheckNames(const std::vector<std::string>& wanted,
                           const std::set<std::string>& known, const char* flag) {
    for (const std::string& w : wanted) {
      bool found = false;
      for (const std::string& k : known) found |= ToLower(k) == ToLower(w);
      if (found) continue;
      std::vector<std::string> names(known.begin(), known.end());
      return Status::InvalidArgument(fmt::format("--{}: unknown value '{}'{}", flag, w,
                                                 DidYouMean(ClosestNames(w, names))));
    }
    return Status::OK();
  }

  void Reject(Recommendation* out, const InstanceType& t, const RegionPrice* region, int nodes,
              std::string reason, std::shared_ptr<const Estimate> estimate = nullptr) {
    Candidate c;
    c.instance = &t;
    c.region = region;
    c.nodes = nodes;
    c.estimate = std::move(estimate);
    c.rejection = std::move(reason);
    out->rejected.push_back(std::move(c));
  }

  bool NeedsGpu() const {
    return w_.kind == WorkloadKind::kRender || w_.kind == WorkloadKind::kRealtimeRender ||
           w_.kind == WorkloadKind::kCad;
  }

  std::vector<int> NodeCounts() const {
    bool scales_out = w_.is_training() || w_.kind == WorkloadKind::kRender ||
                      w_.kind == WorkloadKind::kPreprocess;
    std::vector<int> counts = {1};
    if (!scales_out) return counts;
    for (int n = 2; n <= o_.max_nodes; n *= 2) counts.push_back(n);
    return counts;
  }

  void Consider(const InstanceType& t, Recommendation* out) {
    // Filters first: they say why without estimating.
    if (!AnyOf(o_.providers, t.provider)) return Reject(out, t, nullptr, 1, "provider excluded");
    if (!o_.instances.empty() && !AnyOf(o_.instances, t.name)) {
      return Reject(out, t, nullptr, 1, "not among the requested instance types");
    }
    if (t.has_gpu() && t.gpu == nullptr) {
      return Reject(out, t, nullptr, 1,
                    "GPU model not disclosed by the provider, so it cannot be estimated");
    }
    if (!include_gpus_.empty() && !include_gpus_.count(t.gpu)) {
      return Reject(out, t, nullptr, 1, t.has_gpu() ? "GPU model not among --gpu" : "no GPU, and --gpu asks for one");
    }
    if (t.gpu && exclude_gpus_.count(t.gpu)) return Reject(out, t, nullptr, 1, "GPU model excluded");
    if (!t.has_gpu() && (NeedsGpu() || !o_.include_cpu)) {
      return Reject(out, t, nullptr, 1, NeedsGpu() ? "needs a GPU" : "CPU instances excluded");
    }
    for (int nodes : NodeCounts()) {
      double gpus = t.gpu_count * nodes;
      if ((o_.min_gpus && gpus < *o_.min_gpus) || (o_.max_gpus && gpus > *o_.max_gpus)) {
        Reject(out, t, nullptr, nodes,
               fmt::format("{} GPUs is outside the requested range", FormatNumber(gpus, 2)));
        continue;
      }
      ++out->candidates_considered;
      Hardware hw = HardwareForInstance(t, nodes);
      auto estimate = std::make_shared<Estimate>();
      Status s = EstimateWorkload(catalog_, w_, hw, estimate.get());
      if (!s.ok()) {
        Reject(out, t, nullptr, nodes, s.message());
        continue;
      }
      if (!estimate->fits) {
        memory_rejects_.push_back(&t);
        Reject(out, t, nullptr, nodes,
               fmt::format("does not fit in memory: needs {:.1f} GiB per device, has {:.1f}",
                           estimate->memory.total_bytes() / kGiB,
                           estimate->memory.capacity_bytes / kGiB),
               estimate);
        continue;
      }
      if (estimate->serving && !estimate->serving->meets_targets) {
        Reject(out, t, nullptr, nodes,
               fmt::format("misses the latency target: TTFT {:.0f} ms, TPOT {:.1f} ms",
                           estimate->serving->ttft_s * 1e3, estimate->serving->tpot_s * 1e3),
               estimate);
        continue;
      }
      if (w_.kind == WorkloadKind::kRender && (!estimate->render || estimate->render->seconds_per_frame <= 0)) {
        Reject(out, t, nullptr, nodes,
               "render time unknown: no Blender Open Data score for " + t.gpu_name(), estimate);
        continue;
      }
      if (w_.kind == WorkloadKind::kRealtimeRender || w_.kind == WorkloadKind::kCad) {
        if (estimate->throughput <= 0) {
          Reject(out, t, nullptr, nodes,
                 estimate->notes.empty() ? "carries no streams" : estimate->notes.front(), estimate);
          continue;
        }
      }
      PriceRegions(t, nodes, estimate, out);
    }
  }

  void PriceRegions(const InstanceType& t, int nodes, const std::shared_ptr<const Estimate>& e,
                    Recommendation* out) {
    const Estimate& est = *e;
    int replicas = 1;
    if (est.serving) replicas = std::max(1, est.serving->replicas);
    if (w_.kind == WorkloadKind::kRealtimeRender || w_.kind == WorkloadKind::kCad) {
      replicas = static_cast<int>(std::ceil(w_.streams / std::max(1.0, est.throughput)));
    }
    double hours = w_.kind == WorkloadKind::kServing || w_.kind == WorkloadKind::kRealtimeRender ||
                           w_.kind == WorkloadKind::kCad
                       ? o_.serving_hours
                       : est.total_s / 3600;
    if (o_.fixed_hours) hours = *o_.fixed_hours;
    for (const RegionPrice& r : t.regions) {
      if (!AnyOf(o_.regions, r.region)) continue;
      bool priced = false;
      for (PricingMode mode : o_.pricing) {
        if (!r.price(mode)) continue;
        priced = true;
        Candidate c = Price(t, r, mode, nodes, replicas, hours, e);
        if (c.feasible()) out->ranked.push_back(std::move(c));
        else out->rejected.push_back(std::move(c));
      }
      if (!priced) {
        std::vector<std::string> modes;
        for (PricingMode m : o_.pricing) modes.emplace_back(PricingModeName(m));
        Reject(out, t, &r, nodes, "price unknown (" + Join(modes, ", ") + ")", e);
      }
    }
  }

  // Bytes a training checkpoint writes: weights and optimizer state of the whole model.
  double CheckpointBytes(const Estimate& e, int devices) const {
    if (!w_.is_training()) return 0;
    const Layout& l = e.layout;
    double shards = static_cast<double>(l.tensor_parallel) * l.pipeline_parallel *
                    (l.zero_stage >= 1 ? l.data_parallel : 1);
    (void)devices;
    return (e.memory.weights_bytes + e.memory.optimizer_bytes) * std::max(1.0, shards);
  }

  Candidate Price(const InstanceType& t, const RegionPrice& r, PricingMode mode, int nodes,
                  int replicas, double hours, const std::shared_ptr<const Estimate>& e) {
    const Estimate& est = *e;
    Candidate c;
    c.instance = &t;
    c.region = &r;
    c.mode = mode;
    c.nodes = nodes;
    c.replicas = replicas;
    c.estimate = e;
    double unit_price = 0;
    catalog_.Convert(*r.price(mode), r.currency, o_.currency, &unit_price).ok();
    double fleet = unit_price * nodes * replicas;
    c.price_per_hour = fleet;
    c.hours = hours;
    std::string cur = o_.currency;
    double cost = fleet * hours;
    if (mode == PricingMode::kOnDemand) {
      double factor = SustainedUseFactor(t, hours);
      if (factor < 1) {
        cost *= factor;
        c.reasons.push_back(fmt::format("GCP sustained-use discount: {:.0f}% off for {:.0f} h in a month",
                                        100 * (1 - factor), std::min(hours, 730.0)));
      }
    } else if (mode == PricingMode::kSpot) {
      double lost_unit = est.render ? est.render->seconds_per_frame / 3600 : 0;
      double bytes_per_s = w_.storage_gb_s ? *w_.storage_gb_s * 1e9 : kDefaultCheckpointBytesPerS;
      SpotRisk risk = ExpectedSpotRisk(catalog_.FindSpotProfile(t.provider),
                                       CheckpointBytes(est, t.gpu ? nodes : 1), bytes_per_s, hours,
                                       lost_unit);
      c.spot = risk;
      if (w_.kind == WorkloadKind::kServing || w_.kind == WorkloadKind::kRealtimeRender ||
          w_.kind == WorkloadKind::kCad) {
        c.warnings.push_back(fmt::format(
            "spot capacity is reclaimed about every {:.0f} h: keep an on-demand floor of "
            "replicas for the latency target",
            risk.mtbf_hours));
      } else {
        c.hours = hours * (1 + risk.overhead_fraction);
        cost = fleet * c.hours;
        std::string rate = risk.assumed_rate ? " (assumed: the provider publishes no rate)" : "";
        if (risk.checkpoint_interval_hours > 0) {
          c.reasons.push_back(fmt::format(
              "spot: +{:.1f}% expected time (MTBF {:.0f} h{}; checkpoint {:.0f} s every {:.1f} h "
              "by Young/Daly; restart {:.0f} min)",
              100 * risk.overhead_fraction, risk.mtbf_hours, rate, risk.checkpoint_seconds,
              risk.checkpoint_interval_hours, risk.restart_hours * 60));
        } else if (risk.checkpoint_seconds > 0) {
          c.reasons.push_back(fmt::format(
              "spot: +{:.1f}% expected time (MTBF {:.0f} h{}; a {:.0f} s checkpoint costs more "
              "than it saves on a {:.1f} h job, so an interruption restarts it; restart {:.0f} "
              "min)",
              100 * risk.overhead_fraction, risk.mtbf_hours, rate, risk.checkpoint_seconds, hours,
              risk.restart_hours * 60));
        } else {
          c.reasons.push_back(fmt::format(
              "spot: +{:.2f}% expected time (MTBF {:.0f} h{}; an interruption loses the work in "
              "flight and a {:.0f} min restart)",
              100 * risk.overhead_fraction, risk.mtbf_hours, rate, risk.restart_hours * 60));
        }
      }
    } else {
      // A commitment is paid for its whole term, used or not.
      double term = (mode == PricingMode::kReserved1y ? 1 : 3) * kHoursPerYear;
      cost = fleet * std::max(hours, term);
      if (auto od = r.price(PricingMode::kOnDemand)) {
        double od_fleet = 0;
        catalog_.Convert(*od, r.currency, o_.currency, &od_fleet).ok();
        c.break_even_utilisation = unit_price / od_fleet;
        c.reasons.push_back(fmt::format(
            "{}: pays for {:.0f} h of the term; cheaper than on-demand only above {:.0f}% "
            "utilisation",
            PricingModeName(mode), term, 100 * *c.break_even_utilisation));
      }
      if (hours < term) {
        c.warnings.push_back(fmt::format("the job uses {:.0f} of the {:.0f} committed hours",
                                         hours, term));
      }
    }
    c.total_cost = cost;
    WorkUnits u = UnitsOf(w_, est, nodes);
    c.unit = u.unit;
    if (u.per_hour > 0) {
      // The estimate's throughput is already that of all the nodes; interruptions stretch the
      // hours, not the work.
      double units = u.per_hour * hours;
      if (units > 0) c.cost_per_unit = cost / units;
    }
    if (est.serving && w_.kind == WorkloadKind::kServing) c.autoscaling = Autoscale(est);
    // Constraints.
    if (o_.deadline_hours && c.hours > *o_.deadline_hours &&
        w_.kind != WorkloadKind::kServing) {
      c.rejection = fmt::format("misses the deadline: {:.1f} h > {:.1f} h", c.hours,
                                *o_.deadline_hours);
    } else if (o_.budget && cost > *o_.budget) {
      c.rejection = fmt::format("over budget: {} > {}", Money(cost, cur), Money(*o_.budget, cur));
    }
    Explain(&c, t, r, est, cur);
    return c;
  }

  AutoscalingPolicy Autoscale(const Estimate& e) const {
    AutoscalingPolicy p;
    const ServingFigures& s = *e.serving;
    p.max_replicas = std::max(1, static_cast<int>(std::ceil(2 * w_.request_rate / s.requests_per_s)));
    p.min_replicas = o_.allow_scale_to_zero ? 0 : 1;
    p.utilisation_at_rate = w_.request_rate / (std::max(1, s.replicas) * s.requests_per_s);
    return p;
  }

  void Explain(Candidate* c, const InstanceType& t, const RegionPrice& r, const Estimate& e,
               const std::string& cur) {
    c->reasons.insert(c->reasons.begin(),
                      fmt::format("{:.1f} h at {}/h = {}; bottleneck {}", c->hours,
                                  Money(*c->price_per_hour, cur), Money(*c->total_cost, cur),
                                  e.bottleneck.empty() ? "-" : e.bottleneck));
    const MemoryBreakdown& m = e.memory;
    if (m.capacity_bytes > 0) {
      double headroom = 1 - m.total_bytes() / m.capacity_bytes;
      if (headroom < kHeadroomWarning) {
        c->warnings.push_back(fmt::format("memory headroom {:.0f}% ({:.1f} of {:.1f} GiB): an "
                                          "allocator spike or longer sequence can run out",
                                          100 * headroom, m.total_bytes() / kGiB,
                                          m.capacity_bytes / kGiB));
      }
    }
    double gpus = t.gpu_count * c->nodes;
    if (gpus > 1 && w_.is_training() && e.time.step_s > 0 &&
        e.time.communication_s > 0.15 * e.time.step_s &&
        HardwareForInstance(t, c->nodes).intra_node_link.rfind("PCIe", 0) == 0) {
      c->warnings.push_back(fmt::format(
          "PCIe-only multi-GPU: gradient all-reduce takes {:.0f}% of each step",
          100 * e.time.communication_s / e.time.step_s));
    }
    if (t.has_gpu() && t.gpu_memory_bytes > 0 && w_.is_training() &&
        t.memory_bytes < t.gpu_memory_bytes) {
      c->warnings.push_back(fmt::format("{:.0f} GiB of host RAM for {:.0f} GiB of GPU memory: "
                                        "loading and checkpointing go through less RAM than the "
                                        "GPUs hold",
                                        t.memory_gib(), t.gpu_memory_gib()));
    }
    if (e.time.input_s > 0 && e.time.input_s >= e.time.step_s * 0.999) {
      c->warnings.push_back(InputBoundWarning(t, r, e, c->nodes));
    }
    int age = today_ - r.as_of_days;
    if (age > kStalePriceDays) {
      c->warnings.push_back(fmt::format("price is {} days old ({})", age, FormatIsoDate(r.as_of_days)));
    }
    for (const std::string& n : e.notes) {
      if (n.rfind("no amount of work", 0) != 0) c->warnings.push_back(n);
    }
  }

  // A GPU job whose input pipeline starves it: how many more vCPUs it needs, and the cheapest
  // CPU instance in the same region that has them (a data-loading companion).
  std::string InputBoundWarning(const InstanceType& t, const RegionPrice& r, const Estimate& e,
                                int nodes) const {
    double gpu_step = e.time.step_s - e.time.input_s > 0 ? e.time.step_s : e.time.input_s;
    double busy = e.time.compute_s + e.time.memory_s + e.time.optimizer_s + e.time.communication_s;
    double need_rate = busy > 0 ? e.layout.global_batch / busy : 0;
    std::string base = fmt::format(
        "input-bound: {} vCPUs feed {:.0f} samples/s, the GPUs could take {:.0f}", t.vcpus * nodes,
        e.layout.global_batch / gpu_step, need_rate);
    if (!w_.loader_samples_per_core_s || need_rate <= 0) return base;
    double missing = std::ceil(need_rate / *w_.loader_samples_per_core_s) - t.vcpus * nodes;
    const InstanceType* best = nullptr;
    double best_price = 0;
    for (const InstanceType& other : catalog_.instances()) {
      if (other.has_gpu() || other.provider != t.provider || other.vcpus < missing) continue;
      const RegionPrice* p = other.FindRegion(r.region);
      if (!p || !p->price(PricingMode::kOnDemand)) continue;
      if (!best || *p->price(PricingMode::kOnDemand) < best_price) {
        best = &other;
        best_price = *p->price(PricingMode::kOnDemand);
      }
    }
    if (!best) return base + fmt::format("; {:.0f} more vCPUs would keep up", missing);
    return base + fmt::format("; a {} ({} vCPUs, {} {}/h in {}) as a data-loading companion "
                              "supplies the missing {:.0f}",
                              best->name, best->vcpus, FormatNumber(best_price, 3),
                              best->regions.front().currency, r.region, missing);
  }

  double Score(const Candidate& c) const {
    switch (o_.objective) {
      case Objective::kCheapest: return c.total_cost.value_or(1e300);
      case Objective::kFastest: return c.hours;
      case Objective::kBalanced:
        // Equal weight to time and cost: their product (geometric balance).
        return c.hours * c.total_cost.value_or(1e300);
    }
    return 0;
  }

  void Rank(Recommendation* out) {
    auto& v = out->ranked;
    std::stable_sort(v.begin(), v.end(), [&](const Candidate& a, const Candidate& b) {
      double sa = Score(a), sb = Score(b);
      if (sa != sb) return sa < sb;
      if (a.hours != b.hours) return a.hours < b.hours;
      return std::tie(a.instance->provider, a.instance->name, a.region->region) <
             std::tie(b.instance->provider, b.instance->name, b.region->region);
    });
    if (!o_.all_regions) {
      std::set<std::tuple<const InstanceType*, PricingMode, int>> seen;
      std::vector<Candidate> kept;
      int dropped = 0;
      for (Candidate& c : v) {
        if (seen.insert({c.instance, c.mode, c.nodes}).second) kept.push_back(std::move(c));
        else ++dropped;
      }
      v = std::move(kept);
      if (dropped > 0) {
        out->notes.push_back(fmt::format("{} more region offers of the same types rank at or below "
                                         "these (--all-regions lists them)",
                                         dropped));
      }
    }
    // Pareto front of (hours, cost): a candidate is on it when no other is at least as fast and
    // as cheap and better in one. Sorted by hours, a running minimum of cost finds it.
    std::vector<size_t> order(v.size());
    for (size_t i = 0; i < v.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      if (v[a].hours != v[b].hours) return v[a].hours < v[b].hours;
      return *v[a].total_cost < *v[b].total_cost;
    });
    double best_cost = 1e300;
    for (size_t i : order) {
      if (*v[i].total_cost < best_cost) {
        v[i].pareto = true;
        best_cost = *v[i].total_cost;
      }
    }
    if (v.size() > 1 && *v[0].total_cost > 0 && v[0].hours > 0) {
      const Candidate& first = v[0];
      const Candidate& second = v[1];
      v[0].reasons.push_back(fmt::format(
          "ranks first by {}: the next ({} {}) is {}", ObjectiveName(o_.objective),
          second.instance->name, PricingModeName(second.mode),
          o_.objective == Objective::kFastest
              ? fmt::format("{:.1f}% slower", 100 * (second.hours / first.hours - 1))
              : fmt::format("{:.1f}% dearer", 100 * (*second.total_cost / *first.total_cost - 1))));
    }
    if (!v.empty()) {
      double fastest = v[0].hours;
      for (const Candidate& c : v) fastest = std::min(fastest, c.hours);
      for (Candidate& c : v) {
        if (w_.is_training() && c.instance->gpu &&
            (c.instance->gpu->architecture == "Kepler" || c.instance->gpu->architecture == "Maxwell" ||
             c.instance->gpu->architecture == "Pascal" || c.instance->gpu->name == "T4")) {
          c.warnings.push_back(fmt::format("{} is an old generation for training: {:.1f}x the "
                                           "time of the fastest candidate",
                                           c.instance->gpu->name, c.hours / fastest));
        }
      }
    }
  }

  void Notes(Recommendation* out) {
    if (!out->ranked.empty() || memory_rejects_.empty() || !w_.is_training()) return;
    // Nothing fits: say what would, on the instance with the most GPU memory per device.
    const InstanceType* biggest = memory_rejects_.front();
    for (const InstanceType* t : memory_rejects_) {
      if (t->gpu_memory_bytes / std::max(1.0, t->gpu_count) >
          biggest->gpu_memory_bytes / std::max(1.0, biggest->gpu_count)) {
        biggest = t;
      }
    }
    Hardware hw = HardwareForInstance(*biggest, 1);
    struct Variant {
      const char* what;
      WorkloadKind kind;
      Recompute recompute;
    } variants[] = {{"full recomputation (gradient checkpointing)", w_.kind, Recompute::kFull},
                    {"LoRA with checkpointing", WorkloadKind::kLora, Recompute::kFull},
                    {"QLoRA with checkpointing", WorkloadKind::kQlora, Recompute::kFull}};
    for (const Variant& v : variants) {
      Workload alt = w_;
      alt.kind = v.kind;
      alt.recompute = v.recompute;
      Estimate e;
      if (EstimateWorkload(catalog_, alt, hw, &e).ok() && e.fits) {
        out->notes.push_back(fmt::format(
            "nothing fits as asked; with {} it fits {} ({:.1f} of {:.1f} GiB per device)", v.what,
            biggest->name, e.memory.total_bytes() / kGiB, e.memory.capacity_bytes / kGiB));
        return;
      }
    }
    out->notes.push_back("nothing fits as asked, not even with QLoRA on " + biggest->name +
                         ": raise --max-nodes for more GPUs");
  }

  const Catalog& catalog_;
  const Workload& w_;
  const RecommendOptions& o_;
  std::set<const Accelerator*> include_gpus_, exclude_gpus_;
  std::vector<const InstanceType*> memory_rejects_;
  int today_ = 0;
};

}  // namespace

bool ParseObjective(std::string_view name, Objective* out) {
  std::string k = NormalizeName(name);
  if (k == "cheapest" || k == "cost") *out = Objective::kCheapest;
  else if (k == "fastest" || k == "time") *out = Objective::kFastest;
  else if (k == "balanced" || k == "balance") *out = Objective::kBalanced;
  else return false;
  return true;
}

std::string_view ObjectiveName(Objective objective) {
  switch (objective) {
    case Objective::kCheapest: return "cheapest";
    case Objective::kFastest: return "fastest";
    case Objective::kBalanced: return "balanced";
  }
  return "";
}

double Candidate::total_gpus() const { return instance->gpu_count * nodes * replicas; }

Status Recommend(const Catalog& catalog, const Workload& workload, const RecommendOptions& options,
                 Recommendation* out) {
  *out = Recommendation();
  Recommender r(catalog, workload, options);
  Status s = r.Validate();
  if (!s.ok()) return s;
  r.Run(out);
  for (const std::string& basis : workload.calibration.basis) {
    out->notes.insert(out->notes.begin(), "calibrated from " + basis);
  }
  return Status::OK();
}

std::vector<std::string> ExplainInstance(const Recommendation& r, const std::string& instance) {
  std::vector<std::string> lines;
  std::string key = ToLower(instance);
  for (size_t i = 0; i < r.ranked.size(); ++i) {
    const Candidate& c = r.ranked[i];
    if (ToLower(c.instance->name) != key) continue;
    lines.push_back(fmt::format("#{} {} {} x{}: {}", i + 1, c.region->region,
                                PricingModeName(c.mode), c.nodes, Join(c.reasons, "; ")));
    if (lines.size() >= 5) break;
  }
  std::map<std::string, int> reasons;
  for (const Candidate& c : r.rejected) {
    if (ToLower(c.instance->name) != key) continue;
    std::string where = c.region ? c.region->region + " " : "";
    ++reasons[c.rejection];
  }
  for (const auto& [reason, count] : reasons) {
    lines.push_back(fmt::format("rejected ({} candidate{}): {}", count, count == 1 ? "" : "s",
                                reason));
  }
  return lines;
}

}  // namespace cloudfit

// The candidate stage: which instance types and node counts can run the workload at all. Filters
// say why without estimating; the rest are estimated once per (type, node count) and priced.
#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "cloudfit/table.h"
#include "recommend/recommender.h"
#include "util/strings.h"
#include "util/validate.h"

namespace cloudfit {

namespace {

// Each name of `wanted` is one that `each_known` gives (ignoring case); the known names are
// gathered only to say which an unknown one may have meant. `each_known(visit)` calls
// visit(name) for every known name until visit returns true.
template <typename EachKnown>
Status CheckNames(const std::vector<std::string>& wanted, const EachKnown& each_known,
                  const char* field) {
  for (const std::string& w : wanted) {
    if (Status named = CheckName(field, w); !named.ok()) return named;
    if (each_known([&](const std::string& k) { return EqualsIgnoringCase(k, w); })) continue;
    std::set<std::string> known;
    each_known([&](const std::string& k) {
      known.insert(k);
      return false;  // every name
    });
    std::vector<std::string> names(known.begin(), known.end());
    return Status::InvalidArgument(fmt::format("{}: unknown value '{}'{}", field, Shown(w),
                                               DidYouMean(ClosestNames(w, names))));
  }
  return Status::OK();
}

bool NeedsGpu(const Workload& w) {
  return w.kind == WorkloadKind::kRender || w.kind == WorkloadKind::kRealtimeRender ||
         w.kind == WorkloadKind::kCad;
}

// Share of each step a multi-node job spends in exposed all-reduce above which a cluster without
// RDMA is rejected: past it, more than half the rented GPU time waits on TCP.
constexpr double kMaxTcpCommunicationShare = 0.5;

// Why a multi-node training candidate cannot run on this instance's fabric, or "" when it can.
// Collectives across nodes need RDMA (EFA, InfiniBand, RoCE) or GCP's GPUDirect-TCPX to run near
// the link rate; over plain Ethernet the estimate prices the network it has, and a cluster whose
// all-reduce would dominate the step is rejected with that reason.
std::string MultiNodeFabricProblem(const RecommendContext& ctx, const InstanceType& t, int nodes,
                                   const Estimate& e) {
  if (nodes < 2 || !ctx.workload.is_training() || !t.has_gpu() || HasRdma(t.interconnect)) {
    return "";
  }
  std::string fabric =
      t.interconnect == Interconnect::kEthernet
          ? fmt::format("Ethernet, {} Gbit/s", FormatNumber(t.network_bits_per_s / 1e9, 0))
          : "interconnect not published, taken as TCP over Ethernet";
  if (ctx.options.require_rdma) {
    return fmt::format("multi-node needs RDMA (--require-rdma): {} has none ({})", t.name, fabric);
  }
  double share = e.time.step_s > 0 ? e.time.communication_s / e.time.step_s : 0;
  if (share > kMaxTcpCommunicationShare) {
    return fmt::format(
        "multi-node without RDMA ({}): all-reduce takes {:.0f}% of each step; use "
        "an EFA, InfiniBand or RoCE type or fewer nodes",
        fabric, 100 * share);
  }
  return "";
}

// The node counts a candidate is tried at: 1, 2, 4, ... up to max_nodes (at most
// kMaxRecommendNodes, so 11 of them), without allocating: asked for every instance type.
struct NodeCountList {
  int counts[16];
  int size = 0;
  const int* begin() const { return counts; }
  const int* end() const { return counts + size; }
};
static_assert(kMaxRecommendNodes <= 1 << 15, "NodeCountList holds powers of two up to 2^15");

NodeCountList NodeCounts(const RecommendContext& ctx) {
  const Workload& w = ctx.workload;
  const RecommendOptions& o = ctx.options;
  bool scales_out =
      w.is_training() || w.kind == WorkloadKind::kRender || w.kind == WorkloadKind::kPreprocess;
  NodeCountList list;
  if (ctx.only_nodes > 0) {
    list.counts[list.size++] = scales_out ? ctx.only_nodes : 1;
    return list;
  }
  list.counts[list.size++] = 1;
  if (!scales_out) return list;
  for (int n = 2; n <= std::min(o.max_nodes, kMaxRecommendNodes); n *= 2) {
    list.counts[list.size++] = n;
  }
  return list;
}

// Whether an estimate's words name the instance type: the few that do (a streaming note says
// which type carries how many sessions) are not shared with other types.
bool NamesInstance(const Estimate& e, const std::string& name) {
  for (const std::string& note : e.notes) {
    if (note.find(name) != std::string::npos) return true;
  }
  for (const Term& term : e.terms) {
    if (term.formula.find(name) != std::string::npos) return true;
  }
  return false;
}

// Why an estimate rules its hardware out whatever the options, or "".
std::string UnfitReason(const Estimate& e) {
  if (e.fits) return "";
  return fmt::format("does not fit in memory: needs {:.1f} GiB per device, has {:.1f}",
                     e.memory.total_bytes() / kGiB, e.memory.capacity_bytes / kGiB);
}

// The workload's estimate on `nodes` of `t` and, when it does not fit, why (UnfitReason): kept
// across requests of this workload when the context keeps estimates, and shared within the
// request by the types of the same shape.
Status EstimateOn(RecommendContext* ctx, const InstanceType& t, int nodes,
                  std::shared_ptr<const Estimate>* out, std::string* unfit) {
  WorkloadEstimates::Entry entry;
  if (ctx->estimates && ctx->estimates->Find(&t, nodes, &entry)) {
    *out = std::move(entry.estimate);
    *unfit = std::move(entry.unfit);
    return entry.status;
  }
  Hardware hw = HardwareForInstance(t, nodes);
  HardwareShape shape = ShapeOf(hw);
  auto same = ctx->shapes.find(shape);
  if (same != ctx->shapes.end()) {
    // The same inputs give the same figures and words; only the hardware's name differs.
    entry.status = same->second->status;
    entry.unfit = same->second->unfit;
    if (same->second->estimate) {
      auto estimate = std::make_shared<Estimate>(*same->second->estimate);
      estimate->hardware = hw.name;
      entry.estimate = std::move(estimate);
    }
  } else {
    auto estimate = std::make_shared<Estimate>();
    EstimateOptions options;
    options.explain = ctx->describe_all;
    options.scratch = &ctx->scratch;
    entry.status = EstimateWorkload(ctx->catalog, ctx->workload, hw, estimate.get(), options);
    if (entry.status.ok()) {
      entry.unfit = UnfitReason(*estimate);
      entry.estimate = std::move(estimate);
    }
    if (!entry.estimate || !NamesInstance(*entry.estimate, t.name)) {
      ctx->shapes.emplace(shape, std::make_shared<WorkloadEstimates::Entry>(entry));
    }
  }
  if (ctx->estimates) ctx->estimates->Insert(&t, nodes, entry);
  *out = std::move(entry.estimate);
  *unfit = std::move(entry.unfit);
  return entry.status;
}

}  // namespace

void ConsiderInstance(RecommendContext* ctx, const InstanceType& t, Recommendation* out) {
  const Workload& w = ctx->workload;
  const RecommendOptions& o = ctx->options;
  // Filters first: they say why without estimating.
  if (!AnyOf(o.providers, t.provider)) return AddRejection(out, t, nullptr, 1, "provider excluded");
  if (!o.instances.empty() && !AnyOf(o.instances, t.name)) {
    return AddRejection(out, t, nullptr, 1, "not among the requested instance types");
  }
  if (t.has_gpu() && t.gpu == nullptr) {
    return AddRejection(out, t, nullptr, 1,
                        "GPU model not disclosed by the provider, so it cannot be estimated");
  }
  if (!ctx->include_gpus.empty() && !ctx->include_gpus.count(t.gpu)) {
    return AddRejection(
        out, t, nullptr, 1,
        t.has_gpu() ? "GPU model not among --gpu" : "no GPU, and --gpu asks for one");
  }
  if (t.gpu && ctx->exclude_gpus.count(t.gpu)) {
    return AddRejection(out, t, nullptr, 1, "GPU model excluded");
  }
  if (!t.has_gpu() && (NeedsGpu(w) || !o.include_cpu)) {
    return AddRejection(out, t, nullptr, 1, NeedsGpu(w) ? "needs a GPU" : "CPU instances excluded");
  }
  for (int nodes : NodeCounts(*ctx)) {
    double gpus = t.gpu_count * nodes;
    if ((o.min_gpus && gpus < *o.min_gpus) || (o.max_gpus && gpus > *o.max_gpus)) {
      AddRejection(out, t, nullptr, nodes,
                   fmt::format("{} GPUs is outside the requested range", FormatNumber(gpus, 2)));
      continue;
    }
    ++out->candidates_considered;
    std::shared_ptr<const Estimate> estimate;
    std::string unfit;
    if (Status s = EstimateOn(ctx, t, nodes, &estimate, &unfit); !s.ok()) {
      AddRejection(out, t, nullptr, nodes, s.message());
      continue;
    }
    if (!estimate->fits) {
      ctx->memory_rejects.push_back(&t);
      AddRejection(out, t, nullptr, nodes, std::move(unfit), estimate);
      continue;
    }
    if (std::string why = MultiNodeFabricProblem(*ctx, t, nodes, *estimate); !why.empty()) {
      AddRejection(out, t, nullptr, nodes, why, estimate);
      continue;
    }
    if (estimate->serving && !estimate->serving->meets_targets) {
      // The serving estimate's note says why (idle even so, or too slow to size sensibly).
      std::string why =
          fmt::format("misses the latency target: TTFT {:.0f} ms, TPOT {:.1f} ms",
                      estimate->serving->ttft_s * 1e3, estimate->serving->tpot_s * 1e3);
      for (const std::string& n : estimate->notes) {
        if (n.rfind("misses the latency target", 0) == 0 || n.rfind("too slow", 0) == 0) why = n;
      }
      AddRejection(out, t, nullptr, nodes, why, estimate);
      continue;
    }
    if (w.kind == WorkloadKind::kRender &&
        (!estimate->render || estimate->render->seconds_per_frame <= 0)) {
      AddRejection(out, t, nullptr, nodes,
                   "render time unknown: no Blender Open Data score for " + t.gpu_name(), estimate);
      continue;
    }
    if (w.kind == WorkloadKind::kRealtimeRender || w.kind == WorkloadKind::kCad) {
      if (estimate->throughput <= 0) {
        AddRejection(out, t, nullptr, nodes,
                     estimate->notes.empty() ? "carries no streams" : estimate->notes.front(),
                     estimate);
        continue;
      }
    }
    PriceCandidates(*ctx, t, nodes, estimate, &ctx->offers, out);
  }
}

void ExplainBestEstimate(RecommendContext* ctx, Recommendation* out) {
  if (out->ranked.empty() || ctx->describe_all) return;
  const Candidate& best = out->ranked.front();
  std::shared_ptr<const Estimate> plain = best.estimate;
  WorkloadEstimates::Entry entry;
  std::shared_ptr<const Estimate> explained;
  if (ctx->estimates && ctx->estimates->Find(best.instance, best.nodes, &entry)) {
    explained = entry.explained;
  }
  if (!explained) {
    auto estimate = std::make_shared<Estimate>();
    EstimateOptions options;
    options.scratch = &ctx->scratch;
    // The same estimate as the candidate pass made, now with its terms; it cannot fail where
    // that one succeeded.
    if (!EstimateWorkload(ctx->catalog, ctx->workload,
                          HardwareForInstance(*best.instance, best.nodes), estimate.get(), options)
             .ok()) {
      return;
    }
    explained = std::move(estimate);
    if (ctx->estimates) {
      entry.explained = explained;
      ctx->estimates->Insert(best.instance, best.nodes, entry);
    }
  }
  CandidateList& ranked = out->ranked;
  for (size_t i = 0; i < ranked.size(); ++i) {
    if (ranked[i].estimate == plain) ranked.Change(i).estimate = explained;
  }
}

HardwareShape ShapeOf(const Hardware& hw) {
  HardwareShape s;
  s.gpu = hw.gpu;
  s.gpus_per_node = hw.gpus_per_node;
  s.nodes = hw.nodes;
  s.gpu_memory_bytes = hw.gpu_memory_bytes;
  s.vcpus_per_node = hw.vcpus_per_node;
  s.host_memory_bytes_per_node = hw.host_memory_bytes_per_node;
  s.cpu = hw.cpu;
  s.intra_link = hw.intra_link;
  s.intra_node_bytes_per_s = hw.intra_node_bytes_per_s;
  s.inter_node_bytes_per_s = hw.inter_node_bytes_per_s;
  s.interconnect = hw.interconnect;
  s.inter_node_assumed = hw.inter_node_assumed;
  s.intra_node_link = hw.intra_node_link;
  s.network_override_bits_per_s = hw.network_override_bits_per_s;
  s.peer_to_peer = hw.peer_to_peer;
  return s;
}

bool HasRdma(Interconnect i) {
  return i == Interconnect::kEfa || i == Interconnect::kInfiniband || i == Interconnect::kRoce ||
         i == Interconnect::kGpuDirectTcpx;
}

void AddRejection(Recommendation* out, const InstanceType& t, const RegionPrice* region, int nodes,
                  std::string reason, std::shared_ptr<const Estimate> estimate) {
  Candidate c;
  c.instance = &t;
  c.region = region;
  c.nodes = nodes;
  c.estimate = std::move(estimate);
  c.rejection = std::move(reason);
  out->rejected.push_back(std::move(c));
}

Status ValidateRecommendOptions(RecommendContext* ctx) {
  const RecommendOptions& o = ctx->options;
  const Catalog& catalog = ctx->catalog;
  if (!catalog.FindCurrency(o.currency)) {
    return Status::InvalidArgument("currency: '" + Shown(o.currency) + "' has no rate");
  }
  // NaN and infinities first (util/validate.h): every comparison below is false for NaN.
  const std::pair<const char*, std::optional<double>> numbers[] = {
      {"deadline_hours", o.deadline_hours},
      {"budget", o.budget},
      {"min_gpus", o.min_gpus},
      {"max_gpus", o.max_gpus},
      {"hours", o.fixed_hours},
      {"serving_hours", o.serving_hours}};
  for (const auto& [field, value] : numbers) {
    if (!value) continue;
    Status finite = CheckNumber(field, *value, -DBL_MAX, DBL_MAX);
    if (!finite.ok()) return finite;
  }
  if (o.deadline_hours && *o.deadline_hours <= 0) {
    return Status::InvalidArgument("deadline_hours: must be above 0");
  }
  // A month of serving is 730 hours; up to a century may be priced, and not less than a minute.
  if (o.serving_hours < 1.0 / 60 || o.serving_hours > 876000) {
    return Status::InvalidArgument(fmt::format(
        "serving_hours: {} is not allowed; hours of serving in [0.0167, 876000]", o.serving_hours));
  }
  if (o.budget && *o.budget <= 0) return Status::InvalidArgument("budget: must be above 0");
  for (const auto& [field, value] :
       {std::pair("min_gpus", o.min_gpus), std::pair("max_gpus", o.max_gpus)}) {
    if (value && (*value < 0 || *value > kMaxTotalDevices)) {
      return Status::InvalidArgument(fmt::format(
          "{}: {} is not allowed; a number of GPUs in [0, {}]", field, *value, kMaxTotalDevices));
    }
  }
  if (o.min_gpus && o.max_gpus && *o.min_gpus > *o.max_gpus) {
    return Status::InvalidArgument(fmt::format("min_gpus: {} is above the most GPUs asked for ({})",
                                               *o.min_gpus, *o.max_gpus));
  }
  if (o.fixed_hours && (*o.fixed_hours <= 0 || *o.fixed_hours > 1e6)) {
    return Status::InvalidArgument("hours: must be in (0, 1000000]");
  }
  if (o.max_nodes < 1 || o.max_nodes > kMaxRecommendNodes) {
    return Status::InvalidArgument(
        fmt::format("max_nodes: must be in [1, {}]", kMaxRecommendNodes));
  }
  if (o.pricing.empty()) return Status::InvalidArgument("pricing: give at least one mode");
  for (const std::string& line : o.excluded_costs) {
    const std::vector<std::string>& known = OptionalCostLines();
    if (std::find(known.begin(), known.end(), line) == known.end()) {
      return Status::InvalidArgument(
          fmt::format("exclude_costs: '{}' is not one of {}", Shown(line), Join(known, ", ")));
    }
  }

  // The names a request may use: those of the catalog's instances and their regions.
  auto each_provider = [&](const auto& visit) {
    for (const InstanceType& t : catalog.instances()) {
      if (visit(t.provider)) return true;
    }
    return false;
  };
  auto each_region = [&](const auto& visit) {
    for (const InstanceType& t : catalog.instances()) {
      for (const RegionPrice& r : t.regions) {
        if (visit(r.region)) return true;
      }
    }
    return false;
  };
  Status s = CheckNames(o.providers, each_provider, "providers");
  if (s.ok()) s = CheckNames(o.regions, each_region, "regions");
  for (const std::string& g : o.gpus) {
    const Accelerator* a = nullptr;
    if (s.ok() && !(s = catalog.FindAccelerator(g, &a)).ok()) {
      s = Status::InvalidArgument("gpus: " + s.message());
    }
    if (a) ctx->include_gpus.insert(a);
  }
  for (const std::string& g : o.exclude_gpus) {
    const Accelerator* a = nullptr;
    if (s.ok() && !(s = catalog.FindAccelerator(g, &a)).ok()) {
      s = Status::InvalidArgument("exclude_gpus: " + s.message());
    }
    if (a) ctx->exclude_gpus.insert(a);
  }
  for (const std::string& name : o.instances) {
    const InstanceType* t = nullptr;
    if (s.ok() && !(s = catalog.FindInstance(name, &t)).ok()) {
      s = Status::InvalidArgument("instances: " + s.message());
    }
  }
  if (s.ok() && ctx->workload.amount_assumed && !o.fixed_hours) {
    s = Status::InvalidArgument(
        "tokens, samples, epochs (with dataset_samples or tokens) or steps: a recommendation "
        "ranks whole jobs, so it needs the job's size; give one of them, or --hours to price a "
        "fixed number of hours");
  }
  return s;
}

void EnumerateCandidates(RecommendContext* ctx, Recommendation* out) {
  // Room for every offer at one node count, so that the list is not moved as it grows.
  size_t offers = 0;
  for (const InstanceType& t : ctx->catalog.instances()) offers += t.regions.size();
  ctx->offers.feasible.reserve(offers * ctx->options.pricing.size());
  out->rejected.reserve(ctx->catalog.instances().size());
  for (const InstanceType& t : ctx->catalog.instances()) ConsiderInstance(ctx, t, out);
}

}  // namespace cloudfit

// The serving plan of a recommendation: each serving candidate's autoscaling policy and the
// reason that says how its replicas were sized, and, for the whole answer, the cheaper plans
// that quantised weights or another multi-GPU split would give.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cloudfit/table.h"
#include "recommend/recommender.h"

namespace cloudfit {

namespace {

// Scale in below this utilisation: the seeds' rule of thumb (30%), kept below scale-out.
constexpr double kScaleInUtilisation = 0.3;
// An alternative is worth a note when it saves at least this share of the first choice's cost.
constexpr double kWorthwhileSaving = 0.05;

struct Variant {
  std::string what;  // for the note
  std::string why;
  std::string caveat;  // what to check before taking it
  Workload workload;
};

// Weight formats below the workload's, each halving the bytes a decode step reads.
std::vector<Variant> QuantisedVariants(const Workload& w) {
  std::vector<Variant> out;
  double bits = w.weight_bits > 0 ? w.weight_bits : BytesPerWeight(w.precision) * 8;
  struct Format {
    NumericFormat format;
    const char* name;
  };
  // One 8-bit format (fp8 where the engine runs it; llama.cpp's Q8_0 otherwise) and one 4-bit.
  bool llama_cpp = w.engine_profile.layer_split && !w.engine_profile.tensor_parallel;
  std::vector<Format> formats = {
      llama_cpp ? Format{NumericFormat::kInt8, "Q8_0 weights"}
                : Format{NumericFormat::kFp8, "fp8 weights"},
      {NumericFormat::kInt4, llama_cpp ? "Q4 weights" : "int4 (AWQ/GPTQ) weights"}};
  for (const Format& f : formats) {
    if (BytesPerWeight(f.format) * 8 >= bits - 1e-9) continue;
    Variant v;
    v.what = f.name;
    v.why = fmt::format(
        "{:.1f} instead of {:.1f} bits per weight: less memory read per decode "
        "step and more room for the KV cache",
        BytesPerWeight(f.format) * 8, bits);
    v.caveat = "; check the quantised model's quality on your task";
    v.workload = w;
    v.workload.precision = f.format;
    v.workload.weight_bits = 0;
    out.push_back(std::move(v));
  }
  return out;
}

// The cheapest feasible offer of a variant, over the whole catalog, as a candidate in
// `r->ranked`; null when nothing is feasible.
const Candidate* Cheapest(const RecommendContext& ctx, Recommendation* r) {
  const PricedOffer* best = nullptr;
  for (const PricedOffer& offer : ctx.offers.feasible) {
    if (!best || offer.total < best->total) best = &offer;
  }
  if (!best) return nullptr;
  r->ranked.push_back(MakeCandidate(ctx, *best, false));
  return &r->ranked.back();
}

std::string Describe(const Candidate& c) {
  const ServingFigures& s = *c.estimate->serving;
  return fmt::format("{} x {} ({}, {})", c.replicas, c.instance->name, c.region->region,
                     PricingModeName(c.mode)) +
         (s.copies > 1 ? fmt::format(", {} copies each", s.copies) : "") +
         (s.tensor_parallel > 1 ? fmt::format(", tensor parallel {}", s.tensor_parallel) : "") +
         (s.pipeline_parallel > 1 ? fmt::format(", pipeline {}", s.pipeline_parallel) : "");
}

}  // namespace

void PlanServing(const RecommendContext& ctx, const Estimate& e, bool describe, Candidate* c) {
  const Workload& w = ctx.workload;
  if (!e.serving || w.kind != WorkloadKind::kServing) return;
  const ServingFigures& s = *e.serving;
  AutoscalingPolicy p;
  p.scale_out_utilisation = w.target_utilisation;
  p.scale_in_utilisation = std::min(kScaleInUtilisation, 0.5 * w.target_utilisation);
  p.min_replicas = ctx.options.allow_scale_to_zero ? 0 : 1;
  // Room for twice the requested rate at the same per-replica load, bounded like the plan.
  double peak = s.requests_per_s > 0 ? 2 * w.request_rate / s.requests_per_s : 1;
  p.max_replicas = static_cast<int>(std::clamp(std::ceil(peak - 1e-9), 1.0, 1e6));
  p.max_replicas = std::max(p.max_replicas, s.replicas);
  p.utilisation_at_rate = s.utilisation;
  c->autoscaling = p;
  if (!describe) return;
  c->reasons.push_back(fmt::format(
      "{}: {} replica(s) at {:.0f}% of saturation ({} requests/s each at most; sized by {}), "
      "{} cop{} of the model per replica (tensor parallel {}, pipeline {}); at {} requests/s "
      "each copy decodes {} sequences, p{:.0f} TTFT {} ms, TPOT {} ms",
      s.engine, s.replicas, 100 * s.utilisation, FormatNumber(s.saturation_requests_per_s, 3),
      s.sized_by == "utilisation"
          ? fmt::format("the {:.0f}% utilisation target", 100 * w.target_utilisation)
          : "the latency targets",
      s.copies, s.copies == 1 ? "y" : "ies", s.tensor_parallel, s.pipeline_parallel,
      FormatNumber(w.request_rate, 3), FormatNumber(s.batch_at_load, 1), 100 * s.percentile,
      FormatNumber(s.ttft_s * 1e3, 1), FormatNumber(s.tpot_s * 1e3, 1)));
}

void ProposeServingAlternatives(const RecommendContext& ctx, Recommendation* out) {
  const Workload& w = ctx.workload;
  if (w.kind != WorkloadKind::kServing || out->ranked.empty()) return;
  // The first choice by cost among the offers ranked.
  const Candidate* first = nullptr;
  for (const Candidate& c : out->ranked) {
    if (c.total_cost && (!first || *c.total_cost < *first->total_cost)) first = &c;
  }
  if (!first) return;
  std::vector<Variant> variants = QuantisedVariants(w);
  if (w.tensor_parallel > 0 || w.pipeline_parallel > 0 || w.layer_split) {
    Variant v;
    v.what = "the multi-GPU split left to cloudfit";
    v.why = "copies of the model and tensor or pipeline parallelism chosen per instance";
    v.workload = w;
    v.workload.tensor_parallel = v.workload.pipeline_parallel = 0;
    v.workload.layer_split = false;
    variants.push_back(std::move(v));
  }
  // One note per variant that saves enough; a 4-bit plan only when it beats the 8-bit one too,
  // since 8-bit weights keep more of the model's quality.
  const Candidate* best_quantised = nullptr;
  std::vector<Recommendation> results(variants.size());
  for (size_t i = 0; i < variants.size(); ++i) {
    const Variant& v = variants[i];
    RecommendContext alt(ctx.catalog, v.workload, ctx.options);
    alt.include_gpus = ctx.include_gpus;
    alt.exclude_gpus = ctx.exclude_gpus;
    alt.today_days = ctx.today_days;
    Recommendation& r = results[i];
    EnumerateCandidates(&alt, &r);
    const Candidate* best = Cheapest(alt, &r);
    if (!best || *best->total_cost >= (1 - kWorthwhileSaving) * *first->total_cost) continue;
    bool quantised = !v.caveat.empty();
    if (quantised && best_quantised &&
        *best->total_cost >= (1 - kWorthwhileSaving) * *best_quantised->total_cost) {
      continue;
    }
    if (quantised) best_quantised = best;
    out->notes.push_back(fmt::format(
        "cheaper with {}: {} serve {} requests/s for {}, {:.0f}% less than {} ({}){}", v.what,
        Describe(*best), FormatNumber(w.request_rate, 3),
        Money(*best->total_cost, ctx.options.currency),
        100 * (1 - *best->total_cost / *first->total_cost), Describe(*first), v.why, v.caveat));
  }
}

}  // namespace cloudfit

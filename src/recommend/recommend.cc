// The recommender: candidates (instance types x node counts, estimated once each), priced per
// region and pricing mode, ranked by the objective and explained. The stages are in
// recommender.h; this file runs them and holds the small shared pieces.
#include "cloudfit/recommend.h"

#include <fmt/format.h>

#include <algorithm>

#include "cloudfit/table.h"
#include "recommend/recommender.h"
#include "util/date.h"
#include "util/strings.h"

namespace cloudfit {

double RecommendContext::ToRequestCurrency(double amount, const std::string& from) const {
  // CurrencyRate::ConvertTo, with the request's currency found once and the source's
  // found again only when it changes.
  if (last_currency_rate_ == nullptr || from != last_currency_) {
    last_currency_rate_ = catalog.FindCurrency(from);
    last_currency_ = from;
  }
  const CurrencyRate* source = last_currency_rate_;
  if (source == nullptr || request_currency == nullptr) return 0;
  return source->ConvertTo(amount, *request_currency);
}

const BillRows& RecommendContext::BillRowsFor(const std::string& provider) const {
  for (const auto& [name, rows] : bill_rows_) {
    if (name == provider) return rows;
  }
  bill_rows_.emplace_back(provider,
                          FindBillRows(catalog, costs, workload, provider, options.currency));
  return bill_rows_.back().second;
}

std::string Money(double amount, const std::string& currency) {
  // Small amounts keep two significant digits, so a few cents never print as 0.
  if (amount > 0 && amount < 0.1) return fmt::format("{:.2g} {}", amount, currency);
  return fmt::format("{} {}", FormatNumber(amount, amount < 10 ? 2 : 0), currency);
}

bool AnyOf(const std::vector<std::string>& wanted, const std::string& value) {
  if (wanted.empty()) return true;
  std::string key = ToLower(value);
  return std::any_of(wanted.begin(), wanted.end(),
                     [&](const std::string& w) { return ToLower(w) == key; });
}

bool ParseObjective(std::string_view name, Objective* out) {
  std::string k = NormalizeName(name);
  if (k == "cheapest" || k == "cost")
    *out = Objective::kCheapest;
  else if (k == "fastest" || k == "time")
    *out = Objective::kFastest;
  else if (k == "balanced" || k == "balance")
    *out = Objective::kBalanced;
  else
    return false;
  return true;
}

std::string_view ObjectiveName(Objective objective) {
  switch (objective) {
    case Objective::kCheapest:
      return "cheapest";
    case Objective::kFastest:
      return "fastest";
    case Objective::kBalanced:
      return "balanced";
  }
  return "";
}

double Candidate::total_gpus() const { return instance->gpu_count * nodes * replicas; }

Status Recommend(const Catalog& catalog, const Workload& workload, const RecommendOptions& options,
                 Recommendation* out, WorkloadEstimates* estimates) {
  *out = Recommendation();
  RecommendContext ctx(catalog, workload, options);
  ctx.estimates = estimates;
  Status s = ValidateRecommendOptions(&ctx);
  if (s.ok()) s = CostData::Load(catalog, &ctx.costs);
  if (!s.ok()) return s;
  ctx.today_days = TodayDays();
  ctx.excluded_cost_lines = ExcludedCostLines(options.excluded_costs);
  EnumerateCandidates(&ctx, out);
  RankCandidates(ctx, ctx.offers, out);
  ExplainBestEstimate(&ctx, out);
  DescribeShown(ctx, out);
  ExplainRanking(ctx, out);
  ProposeServingAlternatives(ctx, out);
  AddRequestNotes(ctx, out);
  for (const std::string& basis : workload.calibration.basis) {
    out->notes.insert(out->notes.begin(), "calibrated from " + basis);
  }
  return Status::OK();
}

Status RecommendOn(const Catalog& catalog, const Workload& workload,
                   const RecommendOptions& options, const InstanceType& instance, int nodes,
                   Recommendation* out) {
  *out = Recommendation();
  if (nodes > kMaxRecommendNodes) {
    return Status::InvalidArgument(
        fmt::format("nodes: {} is not allowed; at most {}", nodes, kMaxRecommendNodes));
  }
  RecommendContext ctx(catalog, workload, options);
  ctx.only_nodes = std::max(1, nodes);
  ctx.describe_all = true;
  Status s = ValidateRecommendOptions(&ctx);
  if (s.ok()) s = CostData::Load(catalog, &ctx.costs);
  if (!s.ok()) return s;
  ctx.today_days = TodayDays();
  ctx.excluded_cost_lines = ExcludedCostLines(options.excluded_costs);
  ConsiderInstance(&ctx, instance, out);
  RankCandidates(ctx, ctx.offers, out);
  return Status::OK();
}

}  // namespace cloudfit

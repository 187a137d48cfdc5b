// The recommender: candidates (instance types x node counts, estimated once each), priced per
// region and pricing mode, ranked by the objective and explained. The stages are in
// recommender.h; this file runs them and holds the small shared pieces.
#include "cloudfit/recommend.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <memory>

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
  return std::any_of(wanted.begin(), wanted.end(),
                     [&](const std::string& w) { return EqualsIgnoringCase(w, value); });
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

namespace {

// Appends a field to a key so that no two different fields append the same bytes: strings
// carry their length, numbers are printed exactly (shortest round trip), absent ones are '-'.
void AppendField(std::string* key, const std::string& value) {
  fmt::format_to(std::back_inserter(*key), "{}:{};", value.size(), value);
}
void AppendField(std::string* key, const std::vector<std::string>& values) {
  fmt::format_to(std::back_inserter(*key), "[{}", values.size());
  for (const std::string& v : values) AppendField(key, v);
  key->push_back(']');
}
void AppendField(std::string* key, const std::optional<double>& value) {
  if (value) {
    fmt::format_to(std::back_inserter(*key), "{};", *value);
  } else {
    key->append("-;");
  }
}
void AppendField(std::string* key, double value) {
  fmt::format_to(std::back_inserter(*key), "{};", value);
}

}  // namespace

std::string PricingOptionsKey(const RecommendOptions& o) {
  std::string key;
  key.reserve(96);
  AppendField(&key, o.providers);
  AppendField(&key, o.regions);
  AppendField(&key, o.gpus);
  AppendField(&key, o.exclude_gpus);
  AppendField(&key, o.instances);
  AppendField(&key, o.deadline_hours);
  AppendField(&key, o.budget);
  AppendField(&key, o.min_gpus);
  AppendField(&key, o.max_gpus);
  for (PricingMode mode : o.pricing) key.push_back(static_cast<char>('a' + static_cast<int>(mode)));
  key.push_back(';');
  AppendField(&key, static_cast<double>(o.include_cpu));
  AppendField(&key, static_cast<double>(o.max_nodes));
  AppendField(&key, o.currency);
  AppendField(&key, o.serving_hours);
  AppendField(&key, o.fixed_hours);
  AppendField(&key, static_cast<double>(o.allow_scale_to_zero));
  AppendField(&key, o.excluded_costs);
  AppendField(&key, static_cast<double>(o.require_rdma));
  AppendField(&key, static_cast<double>(o.max_spot_nodes));
  // Not in the key: objective, all_regions, top and describe_instances rank and show the
  // offers of a pass. A field added to RecommendOptions must be added above or here; the size
  // check below fails to remind whoever adds one (64-bit libstdc++).
  static_assert(sizeof(void*) != 8 || sizeof(RecommendOptions) == 352,
                "RecommendOptions changed: add the new field to PricingOptionsKey or say why not");
  return key;
}

double Candidate::total_gpus() const { return instance->gpu_count * nodes * replicas; }

namespace {

// The offers of this request: those of the pass kept for its workload and pricing options, or
// a new pass (EnumerateCandidates), kept when the context keeps estimates.
const PricedOffers& PriceOrReuse(RecommendContext* ctx, Recommendation* out,
                                 std::shared_ptr<const CandidatePass>* pass) {
  if (!ctx->estimates) {
    EnumerateCandidates(ctx, out);
    return ctx->offers;
  }
  std::string key = PricingOptionsKey(ctx->options);
  *pass = ctx->estimates->FindPass(key);
  if (!*pass) {
    EnumerateCandidates(ctx, out);
    auto made = std::make_shared<CandidatePass>();
    made->offers = std::move(ctx->offers);  // a deque moves without moving its bases
    made->rejected = out->rejected;
    made->candidates_considered = out->candidates_considered;
    made->memory_rejects = ctx->memory_rejects;
    ctx->estimates->KeepPass(key, made);
    *pass = std::move(made);
    ctx->pass = pass->get();
    return (*pass)->offers;
  }
  ctx->pass = pass->get();
  out->rejected = (*pass)->rejected;
  out->candidates_considered = (*pass)->candidates_considered;
  ctx->memory_rejects = (*pass)->memory_rejects;
  return (*pass)->offers;
}

}  // namespace

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
  std::shared_ptr<const CandidatePass> pass;  // holds the offers ranked, when kept
  // A kept ranking carries the first offer's estimate with its terms already.
  if (!RankCandidates(ctx, PriceOrReuse(&ctx, out, &pass), out)) {
    ExplainBestEstimate(&ctx, out);
    KeepRanking(ctx, *out);
  }
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

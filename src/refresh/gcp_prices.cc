// GCP: the Cloud Billing Catalog API (an API key; no project needed). Compute Engine bills an
// instance as parts: vCPUs, memory (per GiB) and attached GPUs, each a SKU per region and usage
// type (on-demand, spot, 1- and 3-year resource commitments). This module reads every Compute
// Engine SKU, keeps the parts of the machine families below, and adds them up per machine type
// as GCP bills them: vcpus x core + memory_gib x ram + gpus x gpu. A part missing for a mode
// leaves that mode's price empty (counted, never guessed).
// https://cloud.google.com/billing/docs/reference/rest/v1/services.skus/list
// https://cloud.google.com/compute/all-pricing
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "refresh/json_reader.h"
#include "refresh/provider.h"
#include "util/strings.h"

namespace cloudfit::refresh {

namespace {

constexpr const char* kComputeEngineSkus =
    "https://cloudbilling.googleapis.com/v1/services/6F81-5844-456A/skus";
constexpr int kMaxPages = 100;

// The SKU descriptions of each machine family's parts, as the Billing Catalog words them
// (after a leading "Spot Preemptible ", "Preemptible " or "Commitment v1: " is removed), e.g.
// "A2 Instance Core running in Americas", "Commitment v1: A2 Cpu in Americas for 1 Year",
// "Nvidia Tesla A100 GPU attached to Spot Preemptible VMs running in Americas". Families whose
// parts are not listed here are left unpriced with the reason.
struct Family {
  const char* machine_prefix;
  std::vector<std::string> core;
  std::vector<std::string> ram;
  std::vector<std::string> gpu;  // per GPU; for A4 the per-GPU slice bundles cores and memory
};

const std::vector<Family>& Families() {
  static const std::vector<Family> families = {
      {"a2-highgpu-", {"A2 Instance Core ", "A2 Cpu "}, {"A2 Instance Ram ", "A2 Ram "},
       {"Nvidia Tesla A100 GPU "}},
      {"a2-megagpu-", {"A2 Instance Core ", "A2 Cpu "}, {"A2 Instance Ram ", "A2 Ram "},
       {"Nvidia Tesla A100 GPU "}},
      {"a2-ultragpu-", {"A2 Instance Core ", "A2 Cpu "}, {"A2 Instance Ram ", "A2 Ram "},
       {"Nvidia Tesla A100 80GB GPU ", "Nvidia A100 80GB GPU "}},
      {"a3-highgpu-", {"A3 Instance Core ", "A3 Cpu "}, {"A3 Instance Ram ", "A3 Ram "},
       {"Nvidia H100 80GB GPU "}},
      {"a3-edgegpu-", {"A3 Instance Core ", "A3 Cpu "}, {"A3 Instance Ram ", "A3 Ram "},
       {"Nvidia H100 80GB GPU "}},
      {"a3-megagpu-", {"A3 Mega Instance Core ", "A3Mega Instance Core "},
       {"A3 Mega Instance Ram ", "A3Mega Instance Ram "}, {"Nvidia H100 80GB Mega GPU "}},
      {"a3-ultragpu-", {"A3 Ultra Instance Core ", "A3Ultra Instance Core "},
       {"A3 Ultra Instance Ram ", "A3Ultra Instance Ram "}, {"Nvidia H200 141GB GPU "}},
      {"a4-highgpu-", {}, {}, {"A4 Nvidia B200 (1 gpu slice) "}},
      {"g2-standard-", {"G2 Instance Core ", "G2 Cpu "}, {"G2 Instance Ram ", "G2 Ram "},
       {"Nvidia L4 GPU "}},
      {"g4-standard-", {"G4 Instance Core ", "G4 Cpu "}, {"G4 Instance Ram ", "G4 Ram "},
       {"RTX 6000 96GB ", "Nvidia RTX PRO 6000 "}},
      {"n1-", {"N1 Predefined Instance Core ", "Cpu "}, {"N1 Predefined Instance Ram ", "Ram "},
       {}},
  };
  return families;
}

// N1 machines with attached GPUs are named in the catalog "n1-standard-8+2xT4".
const std::map<std::string, std::string>& N1Gpus() {
  static const std::map<std::string, std::string> gpus = {
      {"T4", "Nvidia Tesla T4 GPU "},   {"V100", "Nvidia Tesla V100 GPU "},
      {"P100", "Nvidia Tesla P100 GPU "}, {"P4", "Nvidia Tesla P4 GPU "}};
  return gpus;
}

bool ModeOfUsage(const std::string& usage, PricingMode* mode) {
  if (usage == "OnDemand") *mode = PricingMode::kOnDemand;
  else if (usage == "Preemptible") *mode = PricingMode::kSpot;
  else if (usage == "Commit1Yr") *mode = PricingMode::kReserved1y;
  else if (usage == "Commit3Yr") *mode = PricingMode::kReserved3y;
  else return false;
  return true;
}

std::string NormalizedDescription(std::string description) {
  for (const char* prefix : {"Commitment v1: ", "Commitment: ", "Spot Preemptible ", "Preemptible "}) {
    if (StartsWith(description, prefix)) description = description.substr(std::string(prefix).size());
  }
  return description + " ";  // so that a key's trailing space also matches at the very end
}

bool MatchesAny(const std::string& description, const std::vector<std::string>& keys) {
  for (const std::string& key : keys) {
    if (StartsWith(description, key)) return true;
  }
  return false;
}

// A part's price: by description key set, mode and region.
using PartKey = std::tuple<std::string, int, std::string>;

class GcpRefresher : public ProviderRefresher {
 public:
  std::string name() const override { return "gcp"; }

  Status Refresh(const ProviderContext& ctx, ProviderResult* out) override {
    out->report.source = kComputeEngineSkus;
    std::string key, where;
    if (!ctx.replaying) {
      Status s = FindGcpApiKey(ctx.credentials, &key, &where);
      if (!s.ok()) return s;
      ctx.Progress("  gcp: API key from " + where);
    }
    std::map<PartKey, double> parts;
    std::set<std::string> regions_seen;
    int fetched_days = 0;
    std::string token;
    for (int page = 0;; ++page) {
      if (page >= kMaxPages) {
        return Status::Corruption(fmt::format("gcp: {}: more than {} pages; is nextPageToken "
                                              "looping?",
                                              kComputeEngineSkus, kMaxPages));
      }
      HttpRequest request;
      request.url = fmt::format("{}?pageSize=5000&currencyCode=USD{}", kComputeEngineSkus,
                                token.empty() ? "" : "&pageToken=" + token);
      if (!key.empty()) request.headers.emplace_back("X-Goog-Api-Key", key);
      HttpResponse response;
      Status s = FetchOk(ctx.http, "gcp", request, &response);
      if (!s.ok()) return s;
      fetched_days = response.fetched_days;
      JsonReader reader("gcp", "GET " + request.url);
      nlohmann::json json;
      s = reader.Parse(response.body, &json);
      if (!s.ok()) return s;
      const nlohmann::json* skus = reader.Array(json, "skus", "");
      if (!skus) return reader.status();
      for (size_t i = 0; i < skus->size(); ++i) {
        ReadSku((*skus)[i], PathIndex("skus", i), &reader, &parts, &regions_seen, &out->report);
        if (!reader.ok()) return reader.status();
      }
      ctx.Progress(fmt::format("  gcp: page {} ({} SKUs)", page + 1, skus->size()));
      token.clear();
      if (auto next = json.find("nextPageToken"); next != json.end() && next->is_string()) {
        token = next->get<std::string>();
      }
      if (token.empty()) break;
    }
    Combine(ctx, parts, regions_seen, fetched_days, out);
    return Status::OK();
  }

 private:
  static void ReadSku(const nlohmann::json& sku, const std::string& path, JsonReader* reader,
                      std::map<PartKey, double>* parts, std::set<std::string>* regions_seen,
                      ProviderRefreshReport* report) {
    auto description = reader->String(sku, "description", path);
    const nlohmann::json* category = reader->Object(sku, "category", path);
    if (!reader->ok()) return;
    auto usage = reader->String(*category, "usageType", PathField(path, "category"));
    if (!reader->ok()) return;
    PricingMode mode;
    if (!ModeOfUsage(*usage, &mode)) return;
    std::string normalized = NormalizedDescription(*description);
    // Which part keys this SKU prices.
    std::vector<std::pair<std::string, const char*>> matched;  // key set id, expected unit
    for (const Family& f : Families()) {
      if (MatchesAny(normalized, f.core)) matched.emplace_back(f.core.front(), "h");
      if (MatchesAny(normalized, f.ram)) matched.emplace_back(f.ram.front(), "GiBy.h");
      if (MatchesAny(normalized, f.gpu)) matched.emplace_back(f.gpu.front(), "h");
    }
    for (const auto& [name, gpu_key] : N1Gpus()) {
      if (StartsWith(normalized, gpu_key)) matched.emplace_back(gpu_key, "h");
    }
    if (matched.empty()) return;

    const nlohmann::json* regions = reader->Array(sku, "serviceRegions", path);
    const nlohmann::json* pricing = reader->Array(sku, "pricingInfo", path);
    if (!reader->ok()) return;
    if (pricing->empty()) return reader->Fail(PathField(path, "pricingInfo"), "empty");
    std::string p0 = PathIndex(PathField(path, "pricingInfo"), 0);
    const nlohmann::json* expression = reader->Object((*pricing)[0], "pricingExpression", p0);
    if (!reader->ok()) return;
    std::string pe = PathField(p0, "pricingExpression");
    auto unit = reader->String(*expression, "usageUnit", pe);
    const nlohmann::json* tiers = reader->Array(*expression, "tieredRates", pe);
    if (!reader->ok()) return;
    // The rate past any free tier: the first tier with a price above 0.
    std::optional<double> price;
    for (size_t i = 0; i < tiers->size() && !price; ++i) {
      std::string tp = PathIndex(PathField(pe, "tieredRates"), i);
      const nlohmann::json* unit_price = reader->Object((*tiers)[i], "unitPrice", tp);
      if (!reader->ok()) return;
      std::string up = PathField(tp, "unitPrice");
      auto units = reader->Number(*unit_price, "units", up);
      double nanos = unit_price->value("nanos", 0.0);
      if (!reader->ok()) return;
      double value = *units + nanos / 1e9;
      if (value > 0) price = value;
    }
    if (!price) {
      return reader->Fail(PathField(pe, "tieredRates"),
                          fmt::format("no tier above 0 for '{}' (a price must be above 0)",
                                      *description));
    }
    for (const auto& [part, expected_unit] : matched) {
      if (*unit != expected_unit) {
        ++report->skipped[fmt::format("SKU in unit '{}' where '{}' was expected", *unit,
                                      expected_unit)];
        continue;
      }
      for (const nlohmann::json& region : *regions) {
        if (!region.is_string()) continue;
        regions_seen->insert(region.get<std::string>());
        PartKey key{part, static_cast<int>(mode), region.get<std::string>()};
        auto [it, inserted] = parts->emplace(key, *price);
        if (!inserted) it->second = std::min(it->second, *price);
      }
    }
  }

  static void Combine(const ProviderContext& ctx, const std::map<PartKey, double>& parts,
                      const std::set<std::string>& regions_seen, int fetched_days,
                      ProviderResult* out) {
    ProviderRefreshReport& report = out->report;
    for (const InstanceType* t : ctx.types) {
      const Family* family = nullptr;
      for (const Family& f : Families()) {
        if (StartsWith(t->name, f.machine_prefix)) {
          family = &f;
          break;
        }
      }
      std::string gpu_key;
      if (family && family->gpu.empty() && t->has_gpu()) {
        // n1-standard-8+2xT4: the GPU after the "x".
        size_t x = t->name.rfind('x');
        auto it = N1Gpus().find(x == std::string::npos ? "" : t->name.substr(x + 1));
        if (it != N1Gpus().end()) gpu_key = it->second;
      } else if (family && !family->gpu.empty()) {
        gpu_key = family->gpu.front();
      }
      if (!family || (t->has_gpu() && gpu_key.empty())) {
        ++report.skipped["machine family whose billing parts cloudfit does not know"];
        continue;
      }
      bool priced = false;
      for (const std::string& region : regions_seen) {
        if (!ctx.WantsRegion(region)) continue;
        RefreshedOffer offer;
        offer.instance_type = t->name;
        offer.region = region;
        offer.currency = "USD";
        offer.as_of_days = fetched_days;
        offer.source = kComputeEngineSkus;
        offer.notes = family->core.empty()
                          ? "GCP Billing Catalog: per-GPU slice price x GPUs"
                          : "GCP Billing Catalog: vCPUs x core + GiB x memory + GPUs x GPU; "
                            "reserved = resource commitment";
        for (int m = 0; m < kPricingModeCount; ++m) {
          auto part = [&](const std::vector<std::string>& keys) -> std::optional<double> {
            if (keys.empty()) return 0.0;
            auto it = parts.find(PartKey{keys.front(), m, region});
            if (it == parts.end()) return std::nullopt;
            return it->second;
          };
          std::optional<double> core = part(family->core);
          std::optional<double> ram = part(family->ram);
          std::optional<double> gpu = t->has_gpu() ? part({gpu_key}) : 0.0;
          if (!core || !ram || !gpu) continue;
          double price = *core * t->vcpus + *ram * t->memory_gib() + *gpu * t->gpu_count;
          if (price > 0) offer.per_hour[static_cast<size_t>(m)] = price;
        }
        if (!offer.any_price()) continue;  // not sold in this region
        if (!offer.per_hour[0]) ++report.skipped["offer without an on-demand part price"];
        ++report.offers;
        ++report.priced_offers;
        priced = true;
        out->offers.push_back(std::move(offer));
      }
      if (priced) {
        ++report.types_priced;
      } else {
        ++report.skipped["type with no complete part prices in the asked regions"];
      }
    }
  }
};

}  // namespace

std::unique_ptr<ProviderRefresher> NewGcpRefresher() { return std::make_unique<GcpRefresher>(); }

}  // namespace cloudfit::refresh

#include "cloudfit/catalog_json.h"

#include "util/date.h"

namespace cloudfit {

namespace {

nlohmann::json Optional(const std::optional<double>& value, double scale) {
  return value ? nlohmann::json(*value / scale) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json GpuToJson(const Accelerator& a) {
  nlohmann::json peaks = nlohmann::json::object();
  for (int i = 0; i < kPrecisionCount; ++i) {
    peaks[std::string(PrecisionName(static_cast<Precision>(i)))] = Optional(a.peak_flops[i], 1e12);
  }
  return {{"name", a.name},
          {"vendor", a.vendor},
          {"aliases", a.aliases},
          {"architecture", a.architecture},
          {"compute_capability", a.compute_capability},
          {"form_factor", a.form_factor},
          {"memory_gib", a.memory_gib()},
          {"memory_type", a.memory_type},
          {"memory_bandwidth_gbps", a.memory_bandwidth_bytes_per_s / 1e9},
          {"dense_peak_tflops", peaks},
          {"nvlink_gbps", a.nvlink_bytes_per_s / 1e9},
          {"pcie_gen", a.pcie_gen},
          {"tdp_w", a.tdp_w},
          {"rt_cores", a.rt_cores},
          {"nvenc", a.nvenc},
          {"av1_encode", a.av1_encode},
          {"vgpu", a.vgpu},
          {"launch_year", a.launch_year},
          {"source", a.source},
          {"as_of", a.as_of},
          {"notes", a.notes}};
}

nlohmann::json ModelToJson(const Model& m) {
  nlohmann::json j = {
      {"name", m.name},
      {"aliases", m.aliases},
      {"family", m.family},
      {"params", m.params},
      {"active_params", m.active_params},
      {"layers", m.layers},
      {"hidden", m.hidden},
      {"heads", m.heads},
      {"kv_heads", m.kv_heads},
      {"ffn_hidden", m.ffn_hidden},
      {"vocab", m.vocab},
      {"context", m.context},
      {"experts", m.experts},
      {"experts_per_token", m.experts_per_token},
      {"tied_embeddings", m.tied_embeddings},
      {"gflops_per_sample",
       m.gflops_per_sample ? nlohmann::json(*m.gflops_per_sample) : nlohmann::json(nullptr)},
      {"resolution", m.resolution},
      {"source", m.source},
      {"as_of", m.as_of}};
  return j;
}

nlohmann::json OfferToJson(const Offer& o) {
  const InstanceType& t = *o.instance;
  nlohmann::json gpu = nullptr;
  if (t.has_gpu()) {
    gpu = {
        {"name", t.gpu_name()}, {"count", t.gpu_count}, {"memory_gib_total", t.gpu_memory_gib()}};
  }
  return {{"provider", t.provider},
          {"instance_type", t.name},
          {"family", t.family},
          {"region", o.region->region},
          {"gpu", gpu},
          {"vcpus", t.vcpus},
          {"memory_gib", t.memory_gib()},
          {"arch", t.arch},
          {"cpu", t.cpu ? nlohmann::json(t.cpu->name) : nlohmann::json(t.cpu_name)},
          {"network_gbps", t.network_bits_per_s / 1e9},
          {"interconnect", t.interconnect == Interconnect::kUnknown
                               ? nlohmann::json(nullptr)
                               : nlohmann::json(InterconnectName(t.interconnect))},
          {"local_disk_gb", t.local_disk_bytes / 1e9},
          {"price_per_hour", o.price_per_hour ? nlohmann::json(*o.price_per_hour) : nullptr},
          {"currency", o.currency.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.currency)},
          {"as_of", o.region->as_of_known() ? nlohmann::json(FormatIsoDate(o.region->as_of_days))
                                            : nlohmann::json(nullptr)},
          {"source", o.region->source}};
}

nlohmann::json OffersToJson(const std::vector<Offer>& offers, PricingMode pricing) {
  nlohmann::json list = nlohmann::json::array();
  for (const Offer& o : offers) list.push_back(OfferToJson(o));
  return {{"schema", "cloudfit.instances/v1"},
          {"pricing", PricingModeName(pricing)},
          {"count", offers.size()},
          {"offers", list}};
}

nlohmann::json CatalogSummaryToJson(const CatalogSummary& s) {
  // An unknown date (a provider without priced offers) is null, as everywhere.
  auto date = [](int days) {
    return days ? nlohmann::json(FormatIsoDate(days)) : nlohmann::json(nullptr);
  };
  nlohmann::json providers = nlohmann::json::array();
  for (const ProviderSummary& p : s.providers) {
    providers.push_back(
        {{"provider", p.provider},
         {"instance_types", p.instance_types},
         {"gpu_instance_types", p.gpu_instance_types},
         {"offers", p.offers},
         {"priced_offers", p.priced_offers},
         {"offers_per_region", p.offers_per_region},
         {"undated_offers", p.undated_offers},
         {"lower_bound_offers", p.lower_bound_offers},
         {"oldest_as_of", date(p.oldest_as_of_days)},
         {"newest_as_of", date(p.newest_as_of_days)},
         {"age_days", p.age_days >= 0 ? nlohmann::json(p.age_days) : nlohmann::json(nullptr)},
         {"stale", p.stale}});
  }
  return {{"schema", "cloudfit.catalog-info/v1"},
          {"origin", s.origin},
          {"accelerators", s.accelerators},
          {"cpus", s.cpus},
          {"models", s.models},
          {"providers", providers},
          {"oldest_as_of", date(s.oldest_as_of_days)},
          {"newest_as_of", date(s.newest_as_of_days)},
          {"today", date(s.today_days)},
          {"warnings", s.warnings}};
}

}  // namespace cloudfit

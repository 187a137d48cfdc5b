// Looks rows of the cost reference tables (cost_tables.h) up by provider, GPU or codec.
#include "cloudfit/cost.h"

namespace cloudfit {

const std::vector<std::string>& OptionalCostLines() {
  static const std::vector<std::string> names = {"egress", "storage", "startup", "billing",
                                                 "licences"};
  return names;
}

CostData::CostData() {
  static const std::shared_ptr<const CostTables> kEmpty = std::make_shared<CostTables>();
  tables_ = kEmpty;
}

Status CostData::Load(const Catalog& catalog, CostData* out) {
  return catalog.cost_tables(&out->tables_);
}

const EgressPrice* CostData::FindEgress(const std::string& provider,
                                        const std::string& destination) const {
  for (const EgressPrice& p : tables_->egress) {
    if (p.provider == provider && p.destination == destination) return &p;
  }
  return nullptr;
}

const StoragePrice* CostData::FindStorage(const std::string& provider) const {
  for (const StoragePrice& p : tables_->storage) {
    if (p.provider == provider) return &p;
  }
  return nullptr;
}

const EgressPrice* CostData::HighestEgress(const std::string& destination) const {
  const EgressPrice* best = nullptr;
  for (const EgressPrice& p : tables_->egress) {
    if (p.destination != destination || !p.usd_per_gb) continue;
    if (best == nullptr || *p.usd_per_gb > *best->usd_per_gb) best = &p;
  }
  return best;
}

const StoragePrice* CostData::HighestStorage() const {
  const StoragePrice* best = nullptr;
  for (const StoragePrice& p : tables_->storage) {
    if (!p.usd_per_gb_month || p.storage_class != "object") continue;
    if (best == nullptr || *p.usd_per_gb_month > *best->usd_per_gb_month) best = &p;
  }
  return best;
}

const LicencePrice* CostData::FindLicence(const std::string& licence,
                                          const std::string& provider) const {
  const LicencePrice* fallback = nullptr;
  for (const LicencePrice& p : tables_->licences) {
    if (p.licence != licence) continue;
    if (p.provider == provider) return &p;
    if (p.provider == "*") fallback = &p;
  }
  return fallback;
}

const BillingRule* CostData::FindBilling(const std::string& provider) const {
  for (const BillingRule& p : tables_->billing) {
    if (p.provider == provider) return &p;
  }
  return nullptr;
}

const SpotRate* CostData::FindSpotRate(const std::string& provider,
                                       const InstanceType& instance) const {
  const SpotRate* fallback = nullptr;
  std::string wildcard = instance.has_gpu() ? "*gpu" : "*cpu";
  for (const SpotRate& p : tables_->spot_rates) {
    if (p.provider != provider) continue;
    if (instance.gpu != nullptr && p.gpu == instance.gpu->name) return &p;
    if (p.gpu == wildcard) fallback = &p;
  }
  return fallback;
}

const StreamBitrate* CostData::FindBitrate(const std::string& codec) const {
  for (const StreamBitrate& p : tables_->bitrates) {
    if (p.codec == codec) return &p;
  }
  return nullptr;
}

}  // namespace cloudfit

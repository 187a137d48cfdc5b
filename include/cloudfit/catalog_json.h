// JSON forms of catalog entries, shared by the command line's --json and the server:
// cloudfit.gpus/v1, cloudfit.models/v1, cloudfit.instances/v1, cloudfit.catalog-info/v1.
#ifndef CLOUDFIT_CATALOG_JSON_H_
#define CLOUDFIT_CATALOG_JSON_H_

#include <nlohmann/json.hpp>

#include "cloudfit/catalog_info.h"
#include "cloudfit/instance_query.h"

namespace cloudfit {

nlohmann::json GpuToJson(const Accelerator& a);
nlohmann::json ModelToJson(const Model& m);
nlohmann::json OfferToJson(const Offer& o);
nlohmann::json OffersToJson(const std::vector<Offer>& offers, PricingMode pricing);
nlohmann::json CatalogSummaryToJson(const CatalogSummary& s);

}  // namespace cloudfit

#endif  // CLOUDFIT_CATALOG_JSON_H_

// The cost reference tables under costs/ of a catalog: egress, storage, licences, billing
// increments, spot interruption rates and stream bitrates, one row each as the files give them.
// The catalog reads them on first use and keeps them (Catalog::cost_tables); CostData (cost.h)
// looks rows up in them.
#ifndef CLOUDFIT_COST_TABLES_H_
#define CLOUDFIT_COST_TABLES_H_

#include <optional>
#include <string>
#include <vector>

namespace cloudfit {

struct EgressPrice {
  std::string provider;
  std::string destination;  // internet, region
  std::optional<double> usd_per_gb;
  double free_gb_per_month = 0;
  std::string source;
  std::string as_of;
};

struct StoragePrice {
  std::string provider;
  std::string storage_class;  // object, filesystem
  std::optional<double> usd_per_gb_month;
  std::string source;
  std::string as_of;
};

struct LicencePrice {
  std::string licence;        // windows-server, rtx-vws
  std::string provider;       // or * for every provider without a row
  std::string unit;           // vcpu-hour, session-hour
  std::optional<double> usd;  // nullopt: the provider does not offer it
  std::string source;
  std::string notes;
};

struct BillingRule {
  std::string provider;
  double increment_s = 1;
  double minimum_s = 0;
  std::string source;
};

// How often spot capacity of a GPU class is reclaimed (data/costs/spot_rates.csv).
struct SpotRate {
  std::string provider;
  std::string gpu;  // catalog name, or *gpu / *cpu
  std::string band;
  double interruptions_per_month = 0;
  std::string source;
  std::string as_of;
  bool assumed = false;  // the row says it is an assumption
};

struct StreamBitrate {
  std::string codec;
  double mbps_1080p60 = 0;
  std::string source;
};

struct CostTables {
  std::vector<EgressPrice> egress;
  std::vector<StoragePrice> storage;
  std::vector<LicencePrice> licences;
  std::vector<BillingRule> billing;
  std::vector<SpotRate> spot_rates;
  std::vector<StreamBitrate> bitrates;
};

}  // namespace cloudfit

#endif  // CLOUDFIT_COST_TABLES_H_

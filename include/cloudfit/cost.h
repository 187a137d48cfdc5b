// The whole bill of a job beyond instance hours: data sent out (egress), storage for the data set
// and checkpoints, start-up time every node pays (boot, image pull, model download), minimum
// billing increments and licences. Each is a separate line with how it came about and its source,
// and each but compute can be turned off. Prices come from data/costs/*.csv, dated per row.
#ifndef CLOUDFIT_COST_H_
#define CLOUDFIT_COST_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cloudfit/catalog.h"
#include "cloudfit/workload.h"

namespace cloudfit {

// One line of a candidate's bill, in the recommendation's currency.
struct CostLine {
  std::string name;              // compute, egress, storage, startup, billing, licences
  std::optional<double> amount;  // nullopt: a price is unknown (never counted as 0)
  std::string detail;            // the quantities and rates that produced it
  std::string source;            // data file and URL of the price
};

// The lines beyond compute, in bill order; each can be left out (--exclude-cost).
const std::vector<std::string>& OptionalCostLines();

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
  std::string licence;   // windows-server, rtx-vws
  std::string provider;  // or * for every provider without a row
  std::string unit;      // vcpu-hour, session-hour
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

// The cost reference data, read from the catalog (or the built-in data when the catalog has no
// costs/ directory).
class CostData {
 public:
  static Status Load(const Catalog& catalog, CostData* out);

  const EgressPrice* FindEgress(const std::string& provider, const std::string& destination) const;
  const StoragePrice* FindStorage(const std::string& provider) const;
  // The highest known price, which a provider whose price is unknown is assumed to charge.
  const EgressPrice* HighestEgress(const std::string& destination) const;
  const StoragePrice* HighestStorage() const;
  // The provider's row, else the * row; nullptr when neither exists.
  const LicencePrice* FindLicence(const std::string& licence, const std::string& provider) const;
  const BillingRule* FindBilling(const std::string& provider) const;
  // The GPU's row, else the provider's *gpu or *cpu row; nullptr when the provider has none.
  const SpotRate* FindSpotRate(const std::string& provider, const InstanceType& instance) const;
  const StreamBitrate* FindBitrate(const std::string& codec) const;

 private:
  std::vector<EgressPrice> egress_;
  std::vector<StoragePrice> storage_;
  std::vector<LicencePrice> licences_;
  std::vector<BillingRule> billing_;
  std::vector<SpotRate> spot_rates_;
  std::vector<StreamBitrate> bitrates_;
};

// Time from asking for a node to running the job: boot, image pull and model download at the
// instance's network rate (each an explained assumption where the workload does not say).
struct StartupTime {
  double boot_s = 0;
  double image_s = 0;
  double model_s = 0;
  double image_bytes = 0;
  double model_bytes = 0;
  double network_bytes_per_s = 0;
  double total_s() const { return boot_s + image_s + model_s; }
};
StartupTime EstimateStartup(const Workload& w, const InstanceType& instance);

// Megabits per second of one stream of `w` (stream_mbps, or the codec's rate scaled by pixels
// per second); 0 when no bitrate is known.
double StreamMbps(const CostData& costs, const Workload& w);

// What one candidate's bill is made of, beyond its instance price and hours.
struct JobBillInput {
  const InstanceType* instance = nullptr;
  PricingMode mode = PricingMode::kOnDemand;
  int nodes = 1;
  int replicas = 1;
  double node_price_per_hour = 0;  // one node, in `currency`
  double hours = 0;                // wall-clock hours of the run (or the period of a service)
  double starts = 1;               // node starts per node (1 + expected restarts)
  double checkpoint_bytes = 0;     // one checkpoint of the whole job's state
  double sessions = 0;             // concurrent streams or seats (real time, CAD)
  StartupTime startup;
  std::string currency = "USD";
  // false: amounts only, without detail or source (the recommender prices thousands of offers
  // and words the few it shows).
  bool with_text = true;
};

// Why `instance` cannot run `w` for want of a licence its provider does not offer (Windows on a
// Linux-only cloud), or "".
std::string MissingLicence(const CostData& costs, const Workload& w, const InstanceType& instance);

// The optional lines (egress, storage, startup, billing, licences) for one candidate, less
// `excluded`. Prices in USD are converted to the input's currency through the catalog.
std::vector<CostLine> JobCostLines(const Catalog& catalog, const CostData& costs,
                                   const Workload& w, const JobBillInput& in,
                                   const std::vector<std::string>& excluded);
// The same lines handed to `visit` one at a time, in bill order, without a list: for callers
// that price thousands of offers and only add the amounts up.
void ForEachJobCostLine(const Catalog& catalog, const CostData& costs, const Workload& w,
                        const JobBillInput& in, const std::vector<std::string>& excluded,
                        const std::function<void(CostLine&&)>& visit);

}  // namespace cloudfit

#endif  // CLOUDFIT_COST_H_

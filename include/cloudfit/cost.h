// The whole bill of a job beyond instance hours: data sent out (egress), storage for the data set
// and checkpoints, start-up time every node pays (boot, image pull, model download), minimum
// billing increments and licences. Each is a separate line with how it came about and its source,
// and each but compute can be turned off. Prices come from data/costs/*.csv, dated per row.
#ifndef CLOUDFIT_COST_H_
#define CLOUDFIT_COST_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cloudfit/catalog.h"
#include "cloudfit/cost_tables.h"
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

// Lookups in a catalog's cost tables (cost_tables.h). The tables come from the catalog's costs/
// directory, or from the built-in data when the catalog has none; the catalog reads them once,
// on first use, and every CostData over it shares them (the built-in catalog's are compiled in).
class CostData {
 public:
  // Empty tables: every lookup finds nothing.
  CostData();
  // The catalog's tables; an error in them (a bad row of a catalog directory) is returned on
  // every call.
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
  std::shared_ptr<const CostTables> tables_;  // never null
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

// The rows of the cost tables one provider's bills use, and the currencies' rates: found once
// for the many offers of an instance type rather than for every line of every offer.
struct BillRows {
  const EgressPrice* egress = nullptr;          // the provider's, to the workload's destination
  const EgressPrice* highest_egress = nullptr;  // to that destination, for an unknown price
  const StoragePrice* storage = nullptr;
  const StoragePrice* highest_storage = nullptr;
  const BillingRule* billing = nullptr;
  const LicencePrice* windows = nullptr;  // windows-server
  const LicencePrice* rtx_vws = nullptr;  // RTX Virtual Workstation seats
  const CurrencyRate* usd = nullptr;      // prices in the tables are in US dollars
  const CurrencyRate* target = nullptr;   // the bill's currency; null when it has no rate
};
BillRows FindBillRows(const Catalog& catalog, const CostData& costs, const Workload& w,
                      const std::string& provider, const std::string& currency);

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
  // The rows for the instance's provider and `currency` (FindBillRows), or null to find them.
  const BillRows* rows = nullptr;
  // false: amounts only, without detail or source (the recommender prices thousands of offers
  // and words the few it shows).
  bool with_text = true;
};

// Why `instance` cannot run `w` for want of a licence its provider does not offer (Windows on a
// Linux-only cloud), or "".
std::string MissingLicence(const CostData& costs, const Workload& w, const InstanceType& instance);

// The optional lines (egress, storage, startup, billing, licences) for one candidate, less
// `excluded`. Prices in USD are converted to the input's currency through the catalog.
std::vector<CostLine> JobCostLines(const Catalog& catalog, const CostData& costs, const Workload& w,
                                   const JobBillInput& in,
                                   const std::vector<std::string>& excluded);
// The same lines handed to `visit` one at a time, in bill order, without a list: for callers
// that price thousands of offers and only add the amounts up.
void ForEachJobCostLine(const Catalog& catalog, const CostData& costs, const Workload& w,
                        const JobBillInput& in, const std::vector<std::string>& excluded,
                        const std::function<void(CostLine&&)>& visit);

// The optional lines `excluded` leaves out, as bits in OptionalCostLines() order (bit 0 egress).
unsigned ExcludedCostLines(const std::vector<std::string>& excluded);
// The amounts of the lines ForEachJobCostLine would make, without their words: `total` plus each
// line left in, in bill order (an unknown amount adds nothing), for callers that price thousands
// of offers. `in.rows` must be set.
double AddJobCostAmounts(const CostData& costs, const Workload& w, const JobBillInput& in,
                         unsigned excluded_lines, double total);

// The same bill split by what the node's price changes: a run priced in many regions (the same
// instance type, nodes, mode and hours) has the same egress, storage and licences, and start-up
// and minimum billing proportional to the price. Worked out once per run
// (JobCostPartsOf, `in.node_price_per_hour` unused), AddJobCostAmounts(parts, price, total)
// gives, bit for bit, what the call above gives with that price.
struct JobCostParts {
  unsigned kept_lines = 0;  // bits in OptionalCostLines() order: the lines left in
  double egress = 0;        // each 0 when unknown
  double storage = 0;
  double startup_node_hours = 0;  // x the node's price per hour = the start-up line
  double billed_node_hours = 0;   // x the node's price per hour = the minimum-billing line
  double licences = 0;
};
JobCostParts JobCostPartsOf(const CostData& costs, const Workload& w, const JobBillInput& in,
                            unsigned excluded_lines);
double AddJobCostAmounts(const JobCostParts& parts, double node_price_per_hour, double total);

}  // namespace cloudfit

#endif  // CLOUDFIT_COST_H_

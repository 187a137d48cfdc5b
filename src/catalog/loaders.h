// Parsers for each catalog file. Each turns a parsed CSV table into rows, reporting the first
// bad field as file:line, field and reason.
#ifndef CLOUDFIT_CATALOG_LOADERS_H_
#define CLOUDFIT_CATALOG_LOADERS_H_

#include <vector>

#include "cloudfit/catalog.h"
#include "cloudfit/cost_tables.h"
#include "util/csv.h"

namespace cloudfit {

Status ParseAccelerators(const CsvTable& table, std::vector<Accelerator>* out);
Status ParseCpus(const CsvTable& table, std::vector<CpuGeneration>* out);
Status ParseCurrencies(const CsvTable& table, std::vector<CurrencyRate>* out);
Status ParseModels(const CsvTable& table, std::vector<Model>* out);
// Attaches each row of operators.csv to its model in `models`; checks that every model's
// operators add up to its gflops_per_sample.
Status ParseOperators(const CsvTable& table, std::vector<Model>* models);
Status ParseEfficiency(const CsvTable& table, std::vector<EfficiencyFactor>* out);
Status ParseRenderScores(const CsvTable& table, const Catalog& catalog,
                         std::vector<RenderScore>* out);
Status ParseEncoderRates(const CsvTable& table, std::vector<EncoderRate>* out);
Status ParseSpotProfiles(const CsvTable& table, std::vector<SpotProfile>* out);
// `catalog` must already hold accelerators, CPUs and currencies: rows refer to them.
// `provider` is the one the file is named after; every row must agree with it.
Status ParseInstances(const CsvTable& table, const std::string& provider, const Catalog& catalog,
                      std::vector<InstanceType>* out);

// The cost tables under costs/ of `catalog`, or of the built-in data where it has none (see
// cost_tables.h). Spot rates name GPUs of `catalog`.
Status ReadCostTables(const Catalog& catalog, CostTables* out);

// GPU memory: vendors write "80 GB" for what is 80 GiB (an 80 GB A100 reports 81,920 MiB).
inline constexpr double kBytesPerGib = 1024.0 * 1024.0 * 1024.0;

}  // namespace cloudfit

#endif  // CLOUDFIT_CATALOG_LOADERS_H_

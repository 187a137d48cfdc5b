// Bringing outside price data into a catalog: SkyPilot's public catalog CSVs, and a user's own
// price list (negotiated or regional prices). Both produce a new set of catalog files, merged
// over a base catalog, checked by loading them, and written by the caller.
#ifndef CLOUDFIT_CATALOG_IMPORT_H_
#define CLOUDFIT_CATALOG_IMPORT_H_

#include <map>
#include <string>
#include <vector>

#include "cloudfit/catalog.h"

namespace cloudfit {

struct FileImportReport {
  std::string path;
  std::string provider;
  int rows_read = 0;
  int rows_used = 0;
  // Why rows were not used, with how many of each; nothing is dropped without a reason.
  std::map<std::string, int> skipped;
  // Rows merged into fewer offers: zones of one region, repeated rows. Counted, not lost.
  std::map<std::string, int> merged;
  // Rows whose GPU had to be guessed (the file's name fits several variants and gives no
  // memory or form factor to choose by), or where the file contradicts the catalog: what was
  // guessed or kept, with how many rows.
  std::map<std::string, int> guessed;
};

struct ImportReport {
  std::vector<FileImportReport> files;
  int types_added = 0;
  int types_updated = 0;
  int offers_added = 0;
  int offers_updated = 0;
};

struct SkyPilotImportOptions {
  // The SkyPilot cloud of every file ("aws", "gcp", "lambda", ...). Empty: taken from each
  // file's parent directory name, as laid out in skypilot-catalog.
  std::string cloud;
  // Date the prices were scraped (YYYY-MM-DD). Empty: each file's modification date.
  std::string as_of;
};

// The clouds whose vms.csv layout the importer knows.
const std::vector<std::string>& SkyPilotClouds();

Status ImportSkyPilot(const Catalog& base, const std::vector<std::string>& paths,
                      const SkyPilotImportOptions& options, CatalogFiles* out,
                      ImportReport* report);

// Price list rows: instance_type,region,pricing_mode,price,currency,as_of. Each row replaces
// the catalog's price for that type, region and mode.
Status ImportPriceList(const Catalog& base, const std::vector<std::string>& paths,
                       CatalogFiles* out, ImportReport* report);

// Renders instance types back into an instances/<provider>.csv file.
std::string FormatInstancesCsv(const std::vector<InstanceType>& types);

}  // namespace cloudfit

#endif  // CLOUDFIT_CATALOG_IMPORT_H_

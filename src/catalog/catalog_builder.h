// Fills a Catalog, by either of its two roads: from files (parsed and checked: catalog.cc), or
// from the records the build compiled from data/ (copied: built_in_catalog.cc). Both end with the
// same tables and the same indexes.
#ifndef CLOUDFIT_CATALOG_CATALOG_BUILDER_H_
#define CLOUDFIT_CATALOG_CATALOG_BUILDER_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "catalog/loaders.h"
#include "cloudfit/catalog.h"
#include "cloudfit/cost_tables.h"
#include "util/csv.h"

namespace cloudfit {

struct CatalogRecords;  // catalog_records.h

// What a catalog reads only when first asked for, once, from any thread.
struct Catalog::Lazy {
  std::once_flag costs_once;
  Status costs_status;
  std::shared_ptr<const CostTables> costs;
  // From the files, or for the built-in catalog from its compiled records.
  std::function<Status(const Catalog&, CostTables*)> read_costs = ReadCostTables;

  // Reference tables by name (reference_tables.h).
  struct Table {
    Status status;
    std::shared_ptr<const CsvTable> table;
  };
  std::mutex tables_mutex;
  std::map<std::string, Table> tables;
  // The built-in catalog's tables as split at build time: false for a name it has none of.
  std::function<bool(const std::string& name, CsvTable* out)> compiled_table;

  // The built-in catalog's instance types and models, made on first use (empty functions for
  // a catalog read from files, which has made them already).
  struct Rows {
    std::atomic<bool> made{false};
    std::mutex mutex;
    std::function<void(const Catalog&)> make;
  };
  Rows instances, models;
  // The built-in catalog makes its models without their operators (rows of operators.csv:
  // ~2,500, all of CNN, RNN and diffusion models), and adds a model's when it is found by name
  // or when every model is asked for. Empty for a catalog read from files.
  std::function<void(const Catalog&, size_t model)> add_operators;
  std::unique_ptr<std::once_flag[]> operators_once;  // one per model, with add_operators
  // Adds `model`'s operators (a row of catalog.models()) if they are made on first use.
  static void FillOperators(const Catalog& catalog, const Model* model) {
    if (!catalog.lazy_ || !catalog.lazy_->add_operators) return;
    Lazy& lazy = *catalog.lazy_;
    auto i = static_cast<size_t>(model - catalog.models_.data());
    std::call_once(lazy.operators_once[i], [&] { lazy.add_operators(catalog, i); });
  }
  // Runs `rows.make` once, whichever thread asks first; the others wait for it.
  static void Make(const Catalog& catalog, Rows& rows) {
    if (rows.made.load(std::memory_order_acquire)) return;
    std::lock_guard<std::mutex> lock(rows.mutex);
    if (rows.made.load(std::memory_order_relaxed)) return;
    if (rows.make) rows.make(catalog);
    rows.made.store(true, std::memory_order_release);
  }
};

class CatalogBuilder {
 public:
  static Status Build(CatalogFiles files, std::string origin, Catalog* out);
  // `records` must live as long as the program (the catalog views their text, and makes its
  // instance types and models from them on first use).
  static Status FromRecords(const CatalogRecords& records, Catalog* out);

  // The name indexes of a catalog as (key, row index) in key order: what the compiler writes
  // into the records, so that loading them inserts keys in order without computing them.
  struct Indexes {
    std::vector<std::pair<std::string, size_t>> accelerators, cpus, models, instances;
    bool operator==(const Indexes&) const = default;
  };
  static Indexes IndexesOf(const Catalog& c);

  // reference_tables.cc: ReadReferenceTable, with the catalog's cache.
  static Status ReferenceTable(const Catalog& catalog, const std::string& name,
                               std::shared_ptr<const CsvTable>* out);
};

}  // namespace cloudfit

#endif  // CLOUDFIT_CATALOG_CATALOG_BUILDER_H_

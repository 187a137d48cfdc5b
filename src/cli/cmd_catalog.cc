// cloudfit catalog: what is loaded and how old it is; import SkyPilot or price-list files;
// export the loaded catalog as a directory to edit.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/cli_common.h"
#include "cloudfit/catalog_json.h"
#include "cloudfit/catalog_import.h"
#include "cloudfit/catalog_info.h"
#include "util/date.h"
#include "util/file.h"
#include "util/strings.h"

namespace cloudfit::cli {

namespace {

struct CatalogOptions {
  FormatOptions info_format;
  std::string import_format = "skypilot";
  std::vector<std::string> files;
  std::string out_dir;
  std::string cloud;
  std::string as_of;
  bool import_json = false;
  std::string export_dir;
  bool force = false;
};

// Writes a catalog directory: refuses to replace a directory that holds anything a catalog does
// not (unless --force), and swaps the new tree in whole (util/file.h).
void WriteCatalogDirectory(const std::string& flag, const std::string& dir,
                           const CatalogFiles& files, bool force) {
  DirectoryWriteOptions options;
  options.force = force;
  // The built-in catalog's files and any provider's instances file are catalog files too.
  Catalog built_in;
  if (Catalog::LoadBuiltIn(&built_in).ok()) {
    for (const auto& [name, contents] : built_in.files()) options.known_files.insert(name);
  }
  options.known_files.insert("instances/");
  Status s = WriteDirectoryAtomically(dir, files, options);
  if (!s.ok()) throw CliError{flag + ": " + s.message()};
}

void RunInfo(const GlobalOptions& global, const CatalogOptions& options) {
  Catalog catalog = LoadCatalogOrThrow(global);
  CatalogSummary s = Summarize(catalog, TodayDays());
  auto date = [](int days) { return days ? FormatIsoDate(days) : std::string("-"); };
  if (options.info_format.json) {
    PrintJson(CatalogSummaryToJson(s));
    return;
  }
  std::cout << fmt::format("catalog: {}\n{} accelerators, {} CPU generations, {} models\n\n",
                           s.origin, s.accelerators, s.cpus, s.models);
  Table providers({{"provider", "provider"},
                   {"types", "types", true},
                   {"gpu_types", "gpu types", true},
                   {"offers", "offers", true},
                   {"priced", "priced", true},
                   {"regions", "regions", true},
                   {"undated", "undated", true},
                   {"oldest", "oldest as_of"},
                   {"newest", "newest as_of"},
                   {"age", "age (days)", true}});
  Table regions({{"provider", "provider"}, {"region", "region"}, {"offers", "offers", true}});
  int types = 0;
  for (const ProviderSummary& p : s.providers) {
    types += p.instance_types;
    providers.AddRow({p.provider, std::to_string(p.instance_types),
                      std::to_string(p.gpu_instance_types), std::to_string(p.offers),
                      std::to_string(p.priced_offers), std::to_string(p.offers_per_region.size()),
                      std::to_string(p.undated_offers), date(p.oldest_as_of_days),
                      date(p.newest_as_of_days),
                      p.age_days >= 0 ? std::to_string(p.age_days) + (p.stale ? " (stale)" : "")
                                      : std::string(p.undated_offers ? "unknown" : "-")});
    for (const auto& [region, count] : p.offers_per_region) {
      regions.AddRow({p.provider, region, std::to_string(count)});
    }
  }
  OutputFormat format = options.info_format.format();
  std::cout << providers.Render(format);
  std::cout << fmt::format("\n{} instance types; prices as of {} to {} (today {})\n\n", types,
                           date(s.oldest_as_of_days), date(s.newest_as_of_days),
                           date(s.today_days));
  std::cout << regions.Render(format);
  for (const std::string& w : s.warnings) std::cout << "\nwarning: " << w;
  if (!s.warnings.empty()) std::cout << "\n";
}

void PrintImportReport(const ImportReport& report, const std::string& out_dir, bool json) {
  if (json) {
    nlohmann::json files = nlohmann::json::array();
    for (const FileImportReport& f : report.files) {
      files.push_back({{"path", f.path},
                       {"provider", f.provider},
                       {"rows_read", f.rows_read},
                       {"rows_used", f.rows_used},
                       {"skipped", f.skipped},
                       {"merged", f.merged},
                       {"guessed", f.guessed}});
    }
    PrintJson({{"schema", "cloudfit.import/v1"},
               {"out", out_dir},
               {"files", files},
               {"types_added", report.types_added},
               {"types_updated", report.types_updated},
               {"offers_added", report.offers_added},
               {"offers_updated", report.offers_updated}});
    return;
  }
  for (const FileImportReport& f : report.files) {
    std::cout << fmt::format("{} ({}): {} rows read, {} used\n", f.path, f.provider, f.rows_read,
                             f.rows_used);
    for (const auto& [reason, count] : f.merged) {
      std::cout << fmt::format("  merged  {:>6}  {}\n", count, reason);
    }
    for (const auto& [reason, count] : f.skipped) {
      std::cout << fmt::format("  skipped {:>6}  {}\n", count, reason);
    }
    for (const auto& [what, count] : f.guessed) {
      std::cout << fmt::format("  guessed {:>6}  {}\n", count, what);
    }
  }
  std::cout << fmt::format(
      "wrote {}: {} instance types added, {} updated; {} offers added, {} updated\n", out_dir,
      report.types_added, report.types_updated, report.offers_added, report.offers_updated);
}

void RunImport(const GlobalOptions& global, const CatalogOptions& options) {
  Catalog base = LoadCatalogOrThrow(global);
  CatalogFiles files;
  ImportReport report;
  if (options.import_format == "skypilot") {
    SkyPilotImportOptions skypilot;
    skypilot.cloud = options.cloud;
    skypilot.as_of = options.as_of;
    ThrowIfError(ImportSkyPilot(base, options.files, skypilot, &files, &report));
  } else if (options.import_format == "prices") {
    if (!options.cloud.empty()) throw CliError{"--cloud applies to --format skypilot only"};
    ThrowIfError(ImportPriceList(base, options.files, &files, &report));
  } else {
    throw CliError{"--format: '" + options.import_format + "' is not one of skypilot, prices"};
  }
  WriteCatalogDirectory("--out", options.out_dir, files, options.force);
  PrintImportReport(report, options.out_dir, options.import_json);
}

void RunExport(const GlobalOptions& global, const CatalogOptions& options) {
  Catalog catalog = LoadCatalogOrThrow(global);
  WriteCatalogDirectory("dir", options.export_dir, catalog.files(), options.force);
  std::cout << fmt::format("wrote {} files of the {} catalog to {}\n", catalog.files().size(),
                           catalog.origin(), options.export_dir);
}

}  // namespace

void AddCatalogCommand(CLI::App* app, const GlobalOptions* global) {
  auto options = std::make_shared<CatalogOptions>();
  CLI::App* catalog =
      app->add_subcommand("catalog", "Show, import, refresh or export the catalog");
  catalog->require_subcommand(1);

  CLI::App* info = catalog->add_subcommand(
      "info", "Counts per provider and region, and the age of the prices");
  AddFormatFlags(info, &options->info_format);
  info->callback([global, options]() { RunInfo(*global, *options); });

  CLI::App* import = catalog->add_subcommand(
      "import", "Merge SkyPilot catalog CSVs or a price list into a new catalog directory");
  import->add_option("--format", options->import_format, "skypilot or prices")
      ->capture_default_str();
  import->add_option("files", options->files, "Files to import")->required();
  import->add_option("--out", options->out_dir,
                     "Catalog directory to write (replaced atomically; use it with --catalog)")
      ->required();
  import->add_option("--cloud", options->cloud,
                     "SkyPilot cloud of the files (default: each file's directory name)");
  import->add_option("--as-of", options->as_of,
                     "Date the prices were published, YYYY-MM-DD (default: file date)");
  import->add_flag("--json", options->import_json, "Print the import report as JSON");
  import->add_flag("--force", options->force,
                   "Replace --out even when it holds files that are not part of a catalog");
  import->callback([global, options]() { RunImport(*global, *options); });

  CLI::App* exporter = catalog->add_subcommand(
      "export", "Write the loaded catalog's files to a directory, to edit and use with --catalog");
  exporter->add_option("dir", options->export_dir,
                       "Directory to write (replaced whole and atomically; a directory holding "
                       "other files is refused without --force)")
      ->required();
  exporter->add_flag("--force", options->force,
                     "Replace the directory even when it holds files that are not part of a "
                     "catalog");
  exporter->callback([global, options]() { RunExport(*global, *options); });

  AddCatalogRefreshCommand(catalog, global);
}

}  // namespace cloudfit::cli

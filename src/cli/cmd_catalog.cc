// cloudfit catalog: what is loaded and how old it is; import SkyPilot or price-list files;
// export the loaded catalog as a directory to edit.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/catalog_directory.h"
#include "cli/cli_common.h"
#include "cloudfit/catalog_import.h"
#include "cloudfit/catalog_info.h"
#include "cloudfit/catalog_json.h"
#include "util/date.h"
#include "util/strings.h"
#include "util/validate.h"

namespace cloudfit::cli {

namespace {

struct CatalogOptions {
  FormatOptions info_format;
  std::string import_format = "skypilot";
  std::vector<std::string> files;
  std::string out_dir;
  std::string cloud;
  std::string as_of;
  FormatOptions import_format_flags;
  bool info_regions = false;
  std::string export_dir;
  bool force = false;
};

void RunInfo(const GlobalOptions& global, const CatalogOptions& options) {
  Catalog catalog = LoadCatalogOrThrow(global);
  CatalogSummary s = Summarize(catalog, TodayDays());
  const FormatOptions& format = options.info_format;
  auto date = [](int days) { return days ? FormatIsoDate(days) : std::string("-"); };
  auto date_cell = [](int days) {
    return days ? TableCell(FormatIsoDate(days)) : TableCell::Unknown();
  };
  if (format.json) {
    PrintJson(CatalogSummaryToJson(s));
    return;
  }
  Table providers({{"provider", "provider"},
                   {"instance_types", "types", true},
                   {"gpu_instance_types", "gpu types", true},
                   {"offers", "offers", true},
                   {"priced_offers", "priced", true},
                   {"regions", "regions", true},
                   {"undated_offers", "undated", true},
                   {"lower_bound_offers", "lower bound", true},
                   {"oldest_as_of", "oldest as_of"},
                   {"newest_as_of", "newest as_of"},
                   {"age", "age (days)", true, 0, Audience::kPeople},
                   {"age_days", "", true, 0, Audience::kMachines},
                   {"stale", "", false, 0, Audience::kMachines}});
  Table regions({{"provider", "provider"}, {"region", "region"}, {"offers", "offers", true}});
  int types = 0;
  for (const ProviderSummary& p : s.providers) {
    types += p.instance_types;
    providers.AddRow(
        {p.provider, std::to_string(p.instance_types), std::to_string(p.gpu_instance_types),
         std::to_string(p.offers), std::to_string(p.priced_offers),
         std::to_string(p.offers_per_region.size()), std::to_string(p.undated_offers),
         std::to_string(p.lower_bound_offers), date_cell(p.oldest_as_of_days),
         date_cell(p.newest_as_of_days),
         p.age_days >= 0 ? TableCell(std::to_string(p.age_days) + (p.stale ? " (stale)" : ""))
                         : TableCell::Unknown(),
         p.age_days >= 0 ? TableCell(std::to_string(p.age_days)) : TableCell::Unknown(),
         p.stale ? "true" : "false"});
    for (const auto& [region, count] : p.offers_per_region) {
      regions.AddRow({p.provider, region, std::to_string(count)});
    }
  }
  // CSV is one table: the providers, or the regions with --regions.
  if (format.csv) {
    PrintTable(options.info_regions ? regions : providers, format);
    return;
  }
  PrintNote(fmt::format("catalog: {}\n{} accelerators, {} CPU generations, {} models\n", s.origin,
                        s.accelerators, s.cpus, s.models),
            format);
  if (!options.info_regions) {
    PrintTable(providers, format);
    PrintNote(fmt::format("\n{} instance types; prices as of {} to {} (today {})\n", types,
                          date(s.oldest_as_of_days), date(s.newest_as_of_days), date(s.today_days)),
              format);
  }
  PrintTable(regions, format);
  if (!s.warnings.empty()) PrintNote("", format);
  for (const std::string& w : s.warnings) PrintNote("warning: " + w, format);
}

void PrintImportReport(const ImportReport& report, const std::string& out_dir,
                       const FormatOptions& format) {
  if (format.json) {
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
  if (format.format() != OutputFormat::kTable) {
    // One row per file and reason: what was used, merged or skipped, and how many rows.
    Table table({{"path", "file"},
                 {"provider", "provider"},
                 {"outcome", "outcome"},
                 {"reason", "reason"},
                 {"rows", "rows", true}});
    for (const FileImportReport& f : report.files) {
      table.AddRow({f.path, f.provider, "read", "", std::to_string(f.rows_read)});
      table.AddRow({f.path, f.provider, "used", "", std::to_string(f.rows_used)});
      for (const auto& [reason, count] : f.merged) {
        table.AddRow({f.path, f.provider, "merged", reason, std::to_string(count)});
      }
      for (const auto& [reason, count] : f.skipped) {
        table.AddRow({f.path, f.provider, "skipped", reason, std::to_string(count)});
      }
    }
    PrintTable(table, format);
    PrintNote(fmt::format("wrote {}: {} instance types added, {} updated; {} offers added, {} "
                          "updated",
                          out_dir, report.types_added, report.types_updated, report.offers_added,
                          report.offers_updated),
              format);
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
    if (!options.cloud.empty()) throw CliError{"--cloud applies to --input-format skypilot only"};
    ThrowIfError(ImportPriceList(base, options.files, &files, &report));
  } else {
    throw CliError{"--input-format: '" + Shown(options.import_format) +
                   "' is not one of skypilot, prices"};
  }
  WriteCatalogDirectory("--out", options.out_dir, files, options.force);
  PrintImportReport(report, options.out_dir, options.import_format_flags);
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
  CLI::App* catalog = app->add_subcommand("catalog", "Show, import, refresh or export the catalog");
  catalog->require_subcommand(1);

  CLI::App* info =
      catalog->add_subcommand("info", "Counts per provider and region, and the age of the prices");
  AddFormatFlags(info, &options->info_format);
  info->add_flag("--regions", options->info_regions,
                 "Only the offers per provider and region (the table --csv prints with it)")
      ->group(kGroupOutput);
  info->callback([global, options]() { RunInfo(*global, *options); });

  CLI::App* import = catalog->add_subcommand(
      "import", "Merge SkyPilot catalog CSVs or a price list into a new catalog directory");
  import
      ->add_option("--input-format", options->import_format,
                   "Format of the files: skypilot or prices")
      ->capture_default_str();
  import->add_option("files", options->files, "Files to import")->required();
  import
      ->add_option("--out", options->out_dir,
                   "Catalog directory to write (replaced atomically; use it with --catalog)")
      ->required();
  import->add_option("--cloud", options->cloud,
                     "SkyPilot cloud of the files (default: each file's directory name)");
  import->add_option("--as-of", options->as_of,
                     "Date the prices were published, YYYY-MM-DD (default: file date)");
  AddFormatFlags(import, &options->import_format_flags);
  import->add_flag("--force", options->force,
                   "Replace --out even when it holds files that are not part of a catalog");
  import->callback([global, options]() { RunImport(*global, *options);
});

CLI::App* exporter = catalog->add_subcommand(
    "export", "Write the loaded catalog's files to a directory, to edit and use with --catalog");
exporter
    ->add_option("dir", options->export_dir,
                 "Directory to write (replaced whole and atomically; a directory holding "
                 "other files is refused without --force)")
    ->required();
exporter->add_flag("--force", options->force,
                   "Replace the directory even when it holds files that are not part of a "
                   "catalog");
exporter->callback([global, options]() { RunExport(*global, *options); });

AddCatalogRefreshCommand(catalog, global);
}  // namespace cloudfit::cli

}  // namespace cloudfit::cli

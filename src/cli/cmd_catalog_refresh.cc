// cloudfit catalog refresh: current prices from the providers' own price APIs into a new
// catalog directory, written atomically. Progress goes to stderr, the per-provider summary to
// stdout. Exit 2 when a provider failed (the others' prices are still written) or when none
// could be refreshed (nothing is written).
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/catalog_directory.h"
#include "cli/cli_common.h"
#include "cloudfit/catalog_refresh.h"
#include "util/strings.h"

namespace cloudfit::cli {

namespace {

struct RefreshFlags {
  std::vector<std::string> providers;
  std::vector<std::string> regions;
  std::string out_dir;
  std::string from_dir;
  std::string save_dir;
  std::string tencent_currency = "CNY";
  bool force = false;
  FormatOptions format;
};

std::string_view OutcomeName(ProviderRefreshReport::Outcome outcome) {
  switch (outcome) {
    case ProviderRefreshReport::Outcome::kRefreshed:
      return "refreshed";
    case ProviderRefreshReport::Outcome::kSkipped:
      return "skipped";
    case ProviderRefreshReport::Outcome::kFailed:
      return "failed";
  }
  return "";
}

int TotalSkipped(const ProviderRefreshReport& p) {
  int total = 0;
  for (const auto& [reason, count] : p.skipped) total += count;
  return total;
}

void PrintReport(const RefreshReport& report, const std::string& out_dir, bool written,
                 const FormatOptions& format) {
  if (format.json) {
    nlohmann::json providers = nlohmann::json::array();
    for (const ProviderRefreshReport& p : report.providers) {
      providers.push_back({{"provider", p.provider},
                           {"outcome", OutcomeName(p.outcome)},
                           {"message", p.message},
                           {"source", p.source},
                           {"types_in_catalog", p.types_in_catalog},
                           {"types_priced", p.types_priced},
                           {"offers", p.offers},
                           {"priced_offers", p.priced_offers},
                           {"skipped", p.skipped},
                           {"notes", p.notes}});
    }
    PrintJson({{"schema", "cloudfit.refresh/v1"},
               {"out", written ? nlohmann::json(out_dir) : nlohmann::json(nullptr)},
               {"providers", providers}});
    return;
  }
  Table table({{"provider", "provider"},
               {"outcome", "outcome"},
               {"types", "types priced", true, 0, Audience::kPeople},
               {"types_priced", "", true, 0, Audience::kMachines},
               {"types_in_catalog", "", true, 0, Audience::kMachines},
               {"offers", "offers", true},
               {"priced_offers", "priced", true},
               {"skipped_rows", "skipped", true}});
  for (const ProviderRefreshReport& p : report.providers) {
    table.AddRow({p.provider, std::string(OutcomeName(p.outcome)),
                  fmt::format("{} of {}", p.types_priced, p.types_in_catalog),
                  std::to_string(p.types_priced), std::to_string(p.types_in_catalog),
                  std::to_string(p.offers), std::to_string(p.priced_offers),
                  std::to_string(TotalSkipped(p))});
  }
  PrintTable(table, format);
  if (format.format() != OutputFormat::kTable) return;  // CSV and Markdown: the table only
  for (const ProviderRefreshReport& p : report.providers) {
    if (!p.message.empty())
      std::cout << fmt::format("\n{} {}: {}", p.provider, OutcomeName(p.outcome), p.message);
    for (const auto& [reason, count] : p.skipped) {
      std::cout << fmt::format("\n{}: skipped {:>6}  {}", p.provider, count, reason);
    }
    for (const std::string& note : p.notes)
      std::cout << fmt::format("\n{}: note: {}", p.provider, note);
  }
  std::cout << "\n";
  if (written)
    std::cout << fmt::format("\nwrote {} (use it with --catalog {})\n", out_dir, out_dir);
}

void Run(const GlobalOptions& global, const RefreshFlags& flags) {
  // Refused before fetching: a refresh takes minutes and would be lost at the write.
  CheckCatalogDestination("--out", flags.out_dir, flags.force);
  Catalog base = LoadCatalogOrThrow(global);
  RefreshOptions options;
  options.providers = flags.providers;
  for (std::string& p : options.providers) p = ToLower(Trim(p));
  options.regions = flags.regions;
  options.from_dir = flags.from_dir;
  options.save_dir = flags.save_dir;
  options.tencent_currency = flags.tencent_currency;
  options.progress = [](const std::string& line) { std::cerr << line << "\n"; };
  CatalogFiles files;
  RefreshReport report;
  Status s = RefreshCatalog(base, options, &files, &report);
  if (!s.ok()) {
    if (!report.providers.empty()) PrintReport(report, flags.out_dir, false, flags.format);
    ThrowIfError(s);
  }
  WriteCatalogDirectory("--out", flags.out_dir, files, flags.force);
  PrintReport(report, flags.out_dir, true, flags.format);
  if (report.any_failed()) {
    std::vector<std::string> failed;
    for (const auto& p : report.providers) {
      if (p.outcome == ProviderRefreshReport::Outcome::kFailed) failed.push_back(p.provider);
    }
    throw CliError{
        fmt::format("refresh incomplete: {} failed (see above); their rows in {} "
                    "keep the prices they had, the other providers' are refreshed",
                    Join(failed, ", "), flags.out_dir)};
  }
}

}  // namespace

void AddCatalogRefreshCommand(CLI::App* catalog, const GlobalOptions* global) {
  auto flags = std::make_shared<RefreshFlags>();
  CLI::App* refresh = catalog->add_subcommand(
      "refresh", "Fetch current prices from the providers' price APIs into a new catalog");
  refresh
      ->add_option("--provider", flags->providers,
                   "Providers to refresh, comma-separated: " + Join(RefreshProviders(), ", ") +
                       " (default: all)")
      ->delimiter(',');
  refresh
      ->add_option("--region", flags->regions,
                   "Regions to price, comma-separated, or 'all' (default: the regions the "
                   "catalog lists per provider)")
      ->delimiter(',');
  refresh
      ->add_option("--out", flags->out_dir,
                   "Catalog directory to write (replaced whole and atomically; a directory "
                   "holding other files is refused without --force; use it with --catalog)")
      ->required();
  refresh->add_flag("--force", flags->force,
                    "Replace --out even when it holds files that are not part of a catalog");
  refresh
      ->add_option("--from-dir", flags->from_dir,
                   "Replay responses saved with --save-responses instead of fetching")
      ->check(CLI::ExistingDirectory);
  refresh->add_option("--save-responses", flags->save_dir,
                      "Keep every provider response in this directory (for --from-dir)");
  refresh
      ->add_option("--tencent-currency", flags->tencent_currency,
                   "Currency of Tencent's answers: CNY (China site) or USD (international)")
      ->capture_default_str();
  AddFormatFlags(refresh, &flags->format);
  refresh->callback([global, flags]() { Run(*global, *flags); });
}

}  // namespace cloudfit::cli

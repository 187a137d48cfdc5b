#include "cli/cli_common.h"

#include <iostream>

namespace cloudfit::cli {

OutputFormat FormatOptions::format() const {
  if (json) return OutputFormat::kJson;
  if (csv) return OutputFormat::kCsv;
  if (markdown) return OutputFormat::kMarkdown;
  return OutputFormat::kTable;
}

void AddFormatFlags(CLI::App* command, FormatOptions* options) {
  auto* json = command->add_flag("--json", options->json, "Print JSON (see docs/json-schema.md)");
  auto* csv = command->add_flag("--csv", options->csv, "Print CSV");
  auto* markdown = command->add_flag("--markdown", options->markdown, "Print a Markdown table");
  json->excludes(csv)->excludes(markdown);
  csv->excludes(markdown);
}

Catalog LoadCatalogOrThrow(const GlobalOptions& options) {
  Catalog catalog;
  ThrowIfError(Catalog::LoadDefault(options.catalog_dir, &catalog));
  return catalog;
}

void ThrowIfError(const Status& status) {
  if (!status.ok()) throw CliError{status.message()};
}

void PrintJson(const nlohmann::json& document) { std::cout << document.dump(2) << "\n"; }

}  // namespace cloudfit::cli

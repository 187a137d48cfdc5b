#include "cli/cli_common.h"

#include <iostream>

namespace cloudfit::cli {

OutputFormat FormatOptions::format() const {
  if (json) return OutputFormat::kJson;
  if (csv) return OutputFormat::kCsv;
  if (markdown) return OutputFormat::kMarkdown;
  return OutputFormat::kTable;
}

void AddWorkloadFlags(CLI::App* c, WorkloadFlags* flags) {
  c->add_option("--file", flags->file, "Workload file (YAML or JSON) of field: value pairs")
      ->check(CLI::ExistingFile);
  c->add_option("--set", flags->sets, "Set any workload field: --set key=value (repeatable)");
  for (const WorkloadField& f : WorkloadFields()) {
    std::string flag = "--" + f.name;
    for (char& ch : flag) {
      if (ch == '_') ch = '-';
    }
    std::string name = f.name;
    c->add_option_function<std::string>(
        flag, [flags, name](const std::string& v) { flags->fields[name] = v; }, f.help);
  }
}

Workload BuildWorkload(const WorkloadFlags& o) {
  Workload w;
  std::vector<std::pair<std::string, std::string>> fields;
  if (!o.file.empty()) ThrowIfError(LoadWorkloadFile(o.file, &fields));
  for (const std::string& set : o.sets) {
    size_t eq = set.find('=');
    if (eq == std::string::npos) throw CliError{"--set: '" + set + "' is not key=value"};
    fields.emplace_back(set.substr(0, eq), set.substr(eq + 1));
  }
  for (const auto& [k, v] : o.fields) fields.emplace_back(k, v);
  for (const auto& [k, v] : fields) ThrowIfError(SetWorkloadField(&w, k, v));
  return w;
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

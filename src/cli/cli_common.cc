#include "cli/cli_common.h"

#include <iostream>

#include "cloudfit/measured_calibration.h"
#include "util/file.h"

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

void AddCalibrationFlags(CLI::App* command, CalibrationFlags* flags) {
  command->add_option("--measured", flags->measured,
                      "A throughput measured for this workload, e.g. \"1.9 it/s on 1x A10\" or "
                      "\"0.8 s/it on g5.xlarge\": the estimate there matches it and other "
                      "hardware is rescaled through the model");
  command->add_option("--calibration", flags->probe_file,
                      "A 'cloudfit probe --out' result: the probed GPU's and CPU's measured "
                      "rates replace the catalog's typical ones");
}

void ApplyCalibrationFlags(const Catalog& catalog, const CalibrationFlags& flags, Workload* w) {
  if (!flags.probe_file.empty()) {
    std::string text;
    Status s = ReadFile(flags.probe_file, &text);
    if (!s.ok()) throw CliError{"--calibration: " + s.message()};
    nlohmann::json probe = nlohmann::json::parse(text, nullptr, false);
    if (probe.is_discarded()) {
      throw CliError{"--calibration: " + flags.probe_file + ": not valid JSON"};
    }
    s = CalibrateFromProbe(catalog, probe, w);
    if (!s.ok()) throw CliError{"--calibration: " + flags.probe_file + ": " + s.message()};
  }
  for (const std::string& text : flags.measured) {
    ThroughputMeasurement m;
    Status s = ParseThroughputMeasurement(catalog, text, &m);
    if (s.ok()) s = CalibrateFromThroughput(catalog, m, w, nullptr);
    if (!s.ok()) throw CliError{"--" + s.message()};
  }
}

}  // namespace cloudfit::cli

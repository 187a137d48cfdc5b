#include "cli/cli_common.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <fstream>
#include <iostream>

#include "cli/terminal.h"
#include "cloudfit/measured_calibration.h"
#include "util/file.h"
#include "util/strings.h"
#include "util/validate.h"

namespace cloudfit::cli {

OutputFormat FormatOptions::format() const {
  if (json) return OutputFormat::kJson;
  if (csv) return OutputFormat::kCsv;
  if (markdown) return OutputFormat::kMarkdown;
  return OutputFormat::kTable;
}

bool FormatOptions::colour() const { return format() == OutputFormat::kTable && ColourWanted(); }

TextLayout FormatOptions::layout() const {
  TextLayout layout;
  layout.max_width = wide ? 0 : OutputWidth();
  layout.colour = colour();
  return layout;
}

void GroupOptions(CLI::App* command, const char* group, std::vector<std::string> names) {
  for (CLI::Option* o : command->get_options()) {
    if (o->get_lnames().empty() || o->get_group().empty()) continue;  // positional or hidden
    std::string name = "--" + o->get_lnames().front();
    bool named = std::find(names.begin(), names.end(), name) != names.end();
    if (named || (names.empty() && o->get_group() == "Options" && name != "--help"))
      o->group(group);
  }
}

void PrintTable(const Table& table, const FormatOptions& format) {
  std::cout << table.Render(format.format(), format.layout());
}

void PrintNote(const std::string& line, const FormatOptions& format) {
  OutputFormat f = format.format();
  if (f == OutputFormat::kCsv || f == OutputFormat::kJson) {
    std::cout.flush();
    std::cerr << line << "\n";
  } else {
    std::cout << line << "\n";
  }
}

void PrintTableWarning(const std::string& line, const FormatOptions& format) {
  PrintNote(Styled("warning: " + line, "33", format.colour()), format);
}

namespace {

// Set by AddOnlyWorkloadFlagsNamedIn; the process builds one command line's flags at a time.
const std::vector<std::string>* workload_flag_words = nullptr;

bool NamedIn(const std::vector<std::string>& words, const std::string& flag) {
  for (const std::string& word : words) {
    if (word.compare(0, flag.size(), flag) == 0 &&
        (word.size() == flag.size() || word[flag.size()] == '=')) {
      return true;
    }
  }
  return false;
}

}  // namespace

void AddOnlyWorkloadFlagsNamedIn(const std::vector<std::string>* words) {
  workload_flag_words = words;
}

void AddWorkloadFlags(CLI::App* c, WorkloadFlags* flags) {
  c->add_option("--file", flags->file, "Workload file (YAML or JSON) of field: value pairs")
      ->check(CLI::ExistingFile)
      ->group(kGroupWorkload);
  c->add_option("--set", flags->sets, "Set any workload field: --set key=value (repeatable)")
      ->group(kGroupWorkload);
  for (const WorkloadField& f : WorkloadFields()) {
    std::string flag = "--" + f.name;
    for (char& ch : flag) {
      if (ch == '_') ch = '-';
    }
    if (workload_flag_words != nullptr && !NamedIn(*workload_flag_words, flag)) continue;
    std::string name = f.name;
    c->add_option_function<std::string>(
         flag, [flags, name](const std::string& v) { flags->fields[name] = v; }, f.help)
        ->group(kGroupWorkload);
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

CLI::Validator NumberIn(double min, double max, const std::string& unit) {
  return CLI::Validator(
      [=](std::string& text) {
        double value = 0;
        Status s = ParseNumber("", text, min, max, unit, &value);
        return s.ok() ? std::string() : s.message();
      },
      fmt::format("NUMBER in [{}, {}]", min, max));
}

CLI::Validator FiniteNumber() {
  return CLI::Validator(
      [](std::string& text) {
        double value = 0;
        if (ParseDouble(text, &value)) return std::string();
        return fmt::format("'{}' is not allowed; a finite number", Shown(text));
      },
      "NUMBER");
}

CLI::Validator WholeIn(long long min, long long max, const std::string& unit) {
  return CLI::Validator(
      [=](std::string& text) {
        long long value = 0;
        Status s = ParseWholeNumber("", text, min, max, unit, &value);
        if (!s.ok()) return s.message();
        text = std::to_string(value);  // "4e3" reaches the integer flag as "4000"
        return std::string();
      },
      fmt::format("INT in [{}, {}]", min, max));
}

void AddFormatFlags(CLI::App* command, FormatOptions* options) {
  auto* json = command->add_flag("--json", options->json,
                                 "Print JSON (schemas in docs/schemas/, see docs/json-schema.md)");
  auto* csv = command->add_flag("--csv", options->csv,
                                "Print CSV: a header and rows, numbers without units (units in "
                                "the header), unknown as an empty field");
  auto* markdown = command->add_flag("--markdown", options->markdown, "Print a Markdown table");
  auto* wide = command->add_flag("--wide", options->wide,
                                 "Show every column of the table, however wide the terminal");
  json->excludes(csv)->excludes(markdown);
  csv->excludes(markdown);
  for (CLI::Option* o : {json, csv, markdown, wide}) o->group(kGroupOutput);
}

Catalog LoadCatalogOrThrow(const GlobalOptions& options) {
  Catalog catalog;
  ThrowIfError(Catalog::LoadDefault(options.catalog_dir, &catalog));
  return catalog;
}

const Catalog& LoadKeptCatalogOrThrow(const GlobalOptions& options) {
  // Never destroyed, and reachable from a static, so LeakSanitizer does not count it as a leak.
  // A deque keeps the catalogs where they are when another is added.
  static auto& kept = *new std::deque<Catalog>();
  return kept.emplace_back(LoadCatalogOrThrow(options));
}

void ThrowIfError(const Status& status) {
  if (!status.ok()) throw CliError{status.message()};
}

void PrintJson(const nlohmann::json& document) { std::cout << DumpJson(document, 2) << "\n"; }

namespace {

// Reads up to '\n' or the end, keeping at most `max` bytes; *too_long when more were dropped.
// False at the end of the input with nothing read.
bool ReadBoundedLine(std::istream& in, size_t max, std::string* line, bool* too_long) {
  line->clear();
  *too_long = false;
  std::streambuf* buffer = in.rdbuf();
  bool any = false;
  while (true) {
    int c = buffer->sbumpc();
    if (c == std::char_traits<char>::eof()) return any;
    any = true;
    if (c == '\n') return true;
    if (line->size() < max)
      line->push_back(static_cast<char>(c));
    else
      *too_long = true;
  }
}

}  // namespace

int RunJsonLines(std::istream& in,
                 const std::function<nlohmann::json(const nlohmann::json& request)>& answer) {
  int failures = 0;
  std::string line;
  bool too_long = false;
  for (long long number = 1; ReadBoundedLine(in, kMaxJsonlLineBytes, &line, &too_long); ++number) {
    if (!too_long && Trim(line).empty()) continue;
    nlohmann::json result;
    nlohmann::json request;
    Status s = too_long ? Status::InvalidArgument(fmt::format("line {}: longer than {} bytes",
                                                              number, kMaxJsonlLineBytes))
                        : ParseJson("", line, kMaxJsonlLineBytes, &request);
    if (s.ok() && !request.is_object()) {
      s = Status::InvalidArgument("each line must be a JSON object");
    }
    if (!s.ok()) {
      result = {{"ok", false}, {"error", s.message()}};
    } else {
      try {
        result = answer(request);
      } catch (const std::exception& e) {
        result = {{"ok", false}, {"error", std::string("internal error: ") + e.what()}};
      }
      if (request.contains("id") && !result.contains("id")) result["id"] = request["id"];
    }
    bool ok = result.is_object() && result.contains("ok") && result["ok"].is_boolean() &&
              result["ok"].get<bool>();
    failures += ok ? 0 : 1;
    std::cout << DumpJson(result) << "\n";
  }
  std::cout.flush();
  return failures;
}

int RunJsonLinesFrom(const std::string& jsonl,
                     const std::function<nlohmann::json(const nlohmann::json& request)>& answer) {
  if (jsonl == "-") return RunJsonLines(std::cin, answer);
  std::ifstream file(jsonl, std::ios::binary);
  if (!file) throw CliError{"--jsonl: " + jsonl + ": cannot open for reading"};
  return RunJsonLines(file, answer);
}

namespace {

TableCell LeafCell(const nlohmann::json& value) {
  if (value.is_null()) return TableCell::Unknown();
  if (value.is_string()) return TableCell(value.get<std::string>());
  if (value.is_boolean()) return TableCell(value.get<bool>() ? "true" : "false");
  if (value.is_number_integer() || value.is_number_unsigned()) return TableCell(value.dump());
  if (value.is_number()) return TableCell(FormatNumber(value.get<double>(), 6));
  return TableCell(value.dump());
}

void Flatten(const nlohmann::json& value, const std::string& path, Table* table) {
  if (value.is_object()) {
    for (const auto& [key, child] : value.items()) {
      Flatten(child, path.empty() ? key : path + "." + key, table);
    }
    return;
  }
  if (value.is_array()) {
    bool plain = std::all_of(value.begin(), value.end(),
                             [](const nlohmann::json& v) { return v.is_primitive(); });
    if (!plain) {
      for (size_t i = 0; i < value.size(); ++i) {
        Flatten(value[i], path + "." + std::to_string(i), table);
      }
      return;
    }
    std::string joined;
    for (const nlohmann::json& v : value) {
      joined += (joined.empty() ? "" : "; ") + (v.is_string() ? v.get<std::string>() : v.dump());
    }
    table->AddRow({path, joined});
    return;
  }
  table->AddRow({path, LeafCell(value)});
}

}  // namespace

Table DocumentTable(const nlohmann::json& document) {
  Table table({{"field", "field"}, {"value", "value"}});
  Flatten(document, "", &table);
  return table;
}

void AddCalibrationFlags(CLI::App* command, CalibrationFlags* flags) {
  command
      ->add_option("--measured", flags->measured,
                   "A throughput measured for this workload, e.g. \"1.9 it/s on 1x A10\" or "
                   "\"0.8 s/it on g5.xlarge\": the estimate there matches it and other "
                   "hardware is rescaled through the model")
      ->group(kGroupCalibration);
  command
      ->add_option("--calibration", flags->probe_file,
                   "A 'cloudfit probe --out' result: the probed GPU's and CPU's measured "
                   "rates replace the catalog's typical ones")
      ->group(kGroupCalibration);
}

void ApplyCalibrationFlags(const Catalog& catalog, const CalibrationFlags& flags, Workload* w) {
  if (!flags.probe_file.empty()) {
    std::string text;
    Status s = ReadFile(flags.probe_file, &text, kMaxDocumentBytes);
    if (!s.ok()) throw CliError{"--calibration: " + s.message()};
    nlohmann::json probe;
    s = ParseJson(flags.probe_file, text, kMaxDocumentBytes, &probe, "not valid JSON");
    if (!s.ok()) throw CliError{"--calibration: " + s.message()};
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

// What the subcommands share: the catalog flag, the output format flags, and how errors end
// the program (a message naming the field, exit code 2, nothing half-written).
#ifndef CLOUDFIT_CLI_CLI_COMMON_H_
#define CLOUDFIT_CLI_CLI_COMMON_H_

#include <CLI/CLI.hpp>
#include <functional>
#include <istream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cloudfit/catalog.h"
#include "cloudfit/hardware.h"
#include "cloudfit/recommend.h"
#include "cloudfit/table.h"
#include "cloudfit/workload.h"

namespace cloudfit::cli {

// Exit status for bad input, bad data and failed I/O alike: the user has something to fix.
inline constexpr int kExitError = 2;

// Thrown by a subcommand to end the program with a message; caught in main.
struct CliError {
  std::string message;
};

struct GlobalOptions {
  std::string catalog_dir;  // --catalog
};

// --json, --csv, --markdown and --wide. CSV is a header and rows only: anything else a command
// has to say goes to stderr (PrintNote), and JSON carries its notes inside the document.
struct FormatOptions {
  bool json = false;
  bool csv = false;
  bool markdown = false;
  bool wide = false;  // the text table keeps every column whatever the terminal's width
  OutputFormat format() const;
  // The terminal's width (unless --wide) and whether to use colour.
  TextLayout layout() const;
  bool colour() const;
};

// Prints a table in the chosen format (never JSON: the caller prints its own document).
void PrintTable(const Table& table, const FormatOptions& format);
// A sentence for people: on stdout beside a text table or Markdown, on stderr beside CSV or
// JSON so that standard output stays one document.
void PrintNote(const std::string& line, const FormatOptions& format);
// A warning that applies to every row, said once above the table (yellow on a terminal).
void PrintTableWarning(const std::string& line, const FormatOptions& format);

// The workload as flags: --file, --set key=value and one flag per workload field.
struct WorkloadFlags {
  std::string file;
  std::vector<std::string> sets;
  std::map<std::string, std::string> fields;
};
void AddWorkloadFlags(CLI::App* command, WorkloadFlags* flags);

// With a list of command-line words, AddWorkloadFlags adds only the field flags (--seq-len,
// --tokens, ...; ~80 of them) that a word names, as `--flag` or `--flag=value`; nullptr (the
// default) adds them all. CLI11 checks each new option against every one before it, so adding
// all of them was ~3M instructions, a fifth of `cloudfit estimate`. Only for a command line
// that is parsed and run: help, completion and error messages need every flag.
void AddOnlyWorkloadFlagsNamedIn(const std::vector<std::string>* words);
// Applies the file, then --set, then the per-field flags (later ones win). Not finalized.
Workload BuildWorkload(const WorkloadFlags& flags);

// Calibration from measurements: --measured "1.9 it/s on 1x A10" and --calibration probe.json.
struct CalibrationFlags {
  std::vector<std::string> measured;
  std::string probe_file;
};
void AddCalibrationFlags(CLI::App* command, CalibrationFlags* flags);
// Applies the probe, then each measured throughput, to a finalized workload.
void ApplyCalibrationFlags(const Catalog& catalog, const CalibrationFlags& flags, Workload* w);

// Validators for numeric flags, through util/validate.h: the text must be a finite number (NaN
// and infinities are refused by name) in [min, max], or for WholeIn a whole number, checked
// before CLI11 converts it, so no value wraps around in the flag's type.
CLI::Validator NumberIn(double min, double max, const std::string& unit = "");
// Any finite number, for flags whose range the command checks with a message of its own.
CLI::Validator FiniteNumber();
CLI::Validator WholeIn(long long min, long long max, const std::string& unit = "");

// A SkyPilot task as input (--task FILE: its resources) and SkyPilot's "A100:8" in --gpu.
struct TaskFlags {
  std::string file;
};
void AddTaskFlag(CLI::App* command, TaskFlags* flags);
// recommend: narrows the options to the task's resources and reads "A100:8" in --gpu. The task's
// use_spot chooses the pricing unless --pricing was given.
void ApplyTaskFlags(const Catalog& catalog, const TaskFlags& flags, bool pricing_given,
                    RecommendOptions* options);
// estimate: "A100:8" in --gpu, or the task's one hardware choice.
void ApplyTaskFlags(const Catalog& catalog, const TaskFlags& flags, HardwareSpec* spec);

// What `export` takes from `recommend`: the same flags, and the recommendation instead of the
// printout.
struct RecommendHooks {
  // Runs first; returning true ends the command (an export of an instance named directly).
  std::function<bool()> instead;
  // Receives the recommendation instead of printing it.
  std::function<void(const Catalog&, const Workload&, const RecommendOptions&,
                     const Recommendation&)>
      consume;
};
// A command with recommend's flags and behaviour under another name, with hooks.
CLI::App* AddRecommendLikeCommand(CLI::App* app, const GlobalOptions* global,
                                  const std::string& name, const std::string& description,
                                  RecommendHooks hooks);

// Adds --json, --csv and --markdown (mutually exclusive) and --wide to a subcommand, in the
// "Output" group of its --help.
void AddFormatFlags(CLI::App* command, FormatOptions* options);

// Puts the named options ("--sort") of `command` into a --help group; with no names, every
// option still in CLI11's default group "Options".
void GroupOptions(CLI::App* command, const char* group, std::vector<std::string> names = {});

// Names of the --help groups, one vocabulary for every command.
inline constexpr const char* kGroupWorkload = "Workload";
inline constexpr const char* kGroupHardware = "Hardware";
inline constexpr const char* kGroupFilters = "Filters";
inline constexpr const char* kGroupPricing = "Pricing and objective";
inline constexpr const char* kGroupCalibration = "Calibration";
inline constexpr const char* kGroupOutput = "Output";
inline constexpr const char* kGroupOptions = "Options";

// Loads the catalog chosen by --catalog, $CLOUDFIT_CATALOG or the built-in one.
Catalog LoadCatalogOrThrow(const GlobalOptions& options);

// The same catalog for a command that runs once and exits: it is kept to the end of the process
// and never destroyed. Freeing its thousands of strings one by one cost 2.5M instructions, a
// sixth of `cloudfit estimate`, for memory the exit returns at once.
const Catalog& LoadKeptCatalogOrThrow(const GlobalOptions& options);

// Throws CliError with the status message when `status` is not ok.
void ThrowIfError(const Status& status);

// Writes a JSON document with a trailing newline (bad UTF-8 in strings becomes U+FFFD).
void PrintJson(const nlohmann::json& document);

// A report that is a document rather than a table (estimate, probe, monitor, poc) as a
// two-column table, `field,value`: one row per JSON leaf, named by its path in the document
// ("memory.weights_gib", "terms.3.value"), so CSV and JSON use the same names and units. Arrays of
// plain values are joined with "; "; null is an empty field. For --csv and --markdown.
Table DocumentTable(const nlohmann::json& document);

// Answers a JSON Lines batch (`--jsonl`): one output line for every non-blank input line,
// whatever its bytes. A line that is too long (kMaxJsonlLineBytes), not UTF-8, not JSON or not
// an object, and a request that fails or throws, is answered {"ok": false, "error": "..."} (with
// the request's "id" when it has one) and the batch goes on. `answer` gets each request object
// and returns the result with "ok" set. Returns how many lines failed.
int RunJsonLines(std::istream& in,
                 const std::function<nlohmann::json(const nlohmann::json& request)>& answer);
// Opens the --jsonl argument: a path, or "-" for stdin; calls RunJsonLines on it.
int RunJsonLinesFrom(const std::string& jsonl,
                     const std::function<nlohmann::json(const nlohmann::json& request)>& answer);

// Subcommands, one file each.
void AddGpusCommand(CLI::App* app, const GlobalOptions* global);
void AddInstancesCommand(CLI::App* app, const GlobalOptions* global);
void AddModelsCommand(CLI::App* app, const GlobalOptions* global);
void AddCatalogCommand(CLI::App* app, const GlobalOptions* global);
// `catalog refresh`, added under the catalog command.
void AddCatalogRefreshCommand(CLI::App* catalog, const GlobalOptions* global);
void AddEstimateCommand(CLI::App* app, const GlobalOptions* global);
void AddCalibrateCommand(CLI::App* app, const GlobalOptions* global);
void AddRecommendCommand(CLI::App* app, const GlobalOptions* global);
void AddCompareCommand(CLI::App* app, const GlobalOptions* global);
void AddExplainCommand(CLI::App* app, const GlobalOptions* global);
void AddServeCommand(CLI::App* app, const GlobalOptions* global);
void AddProbeCommand(CLI::App* app, const GlobalOptions* global);
void AddMonitorCommand(CLI::App* app, const GlobalOptions* global);
void AddPocCommand(CLI::App* app, const GlobalOptions* global);
void AddExportCommand(CLI::App* app, const GlobalOptions* global);
void AddCompletionCommands(CLI::App* app);

}  // namespace cloudfit::cli

#endif  // CLOUDFIT_CLI_CLI_COMMON_H_

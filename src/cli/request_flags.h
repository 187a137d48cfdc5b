// Command-line flags as the JSON request every entry point shares (cloudfit/request.h): the
// workload flags become "workload", the recommend flags "options", --measured and --calibration
// "calibration". Only flags the user gave are written, so defaults come from one place.
#ifndef CLOUDFIT_CLI_REQUEST_FLAGS_H_
#define CLOUDFIT_CLI_REQUEST_FLAGS_H_

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/cli_common.h"

namespace cloudfit::cli {

struct OptionFlags {
  nlohmann::json values = nlohmann::json::object();
  nlohmann::json ToJson() const { return values; }
};

// --provider, --region, --gpu, --exclude-gpu, --instance, --deadline-hours, --budget,
// --min-gpus, --max-gpus, --pricing, --no-cpu, --max-nodes, --currency, --objective,
// --serving-hours, --hours, --scale-to-zero, --all-regions, --top, --exclude-cost,
// --require-rdma.
// With `ranking` false (compare), only the pricing and cost flags: no filters or ranking.
void AddRecommendOptionFlags(CLI::App* command, OptionFlags* flags, bool ranking = true);

// The workload's fields as strings: the file's, then --set, then the per-field flags.
nlohmann::json WorkloadJson(const WorkloadFlags& flags);

// {"measured": [...], "probe": {...}}, or an empty object when neither flag was given.
nlohmann::json CalibrationJson(const CalibrationFlags& flags);

// A JSON Lines request with the command line's options under it (the line's own win).
nlohmann::json MergeOptions(const nlohmann::json& line, const nlohmann::json& options);

// A decoder error as the command line names things: "objective: ..." becomes "--objective: ...".
Status WithFlagNames(const Status& status);

// "12.34 USD" or "1,234 USD".
std::string Amount(double amount, const std::string& currency);

}  // namespace cloudfit::cli

#endif  // CLOUDFIT_CLI_REQUEST_FLAGS_H_

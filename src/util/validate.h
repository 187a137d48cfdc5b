// Checks for every value that enters cloudfit from outside: command-line flags, workload files
// and requests, config.json files, measurements, catalog and price files, HTTP requests. Each
// kind of value is checked here and only here, so every boundary applies the same rules and an
// error names the field the same way: "<field>: '<value>' is not allowed; <what is allowed>".
//
// The limits, each stated once:
//   names (models, GPUs, instance types, regions, providers, currencies)   kMaxNameBytes
//   free text (a --measured string, an id, a note)                          kMaxTextBytes
//   JSON nesting                                                            kMaxJsonDepth
//   a file or document read whole (workload file, config.json, probe, request)  kMaxDocumentBytes
//   one line of a --jsonl batch                                             kMaxJsonlLineBytes
//   a catalog or price file                                                 kMaxDataFileBytes
//   an hourly price, converted to US dollars                                kMin/kMaxUsdPerHour
//   devices (GPUs x nodes) in one estimate                                  kMaxTotalDevices
//
// None of these functions throws.
#ifndef CLOUDFIT_UTIL_VALIDATE_H_
#define CLOUDFIT_UTIL_VALIDATE_H_

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "cloudfit/status.h"

namespace cloudfit {

inline constexpr size_t kMaxNameBytes = 256;
inline constexpr size_t kMaxTextBytes = 4096;
// Real documents nest a few levels (a probe result 4, a config.json 3); 32 leaves room and keeps
// recursive printing and walking far from the stack's end.
inline constexpr int kMaxJsonDepth = 32;
inline constexpr size_t kMaxDocumentBytes = size_t{4} << 20;
inline constexpr size_t kMaxJsonlLineBytes = size_t{1} << 20;
// SkyPilot's whole AWS catalog is about 30 MB; eight times that is still a catalog.
inline constexpr size_t kMaxDataFileBytes = size_t{256} << 20;

// Plausible hourly prices, in US dollars whatever the currency. The cheapest rentals listed are
// about $0.001 per hour (AWS t4g.nano spot; https://aws.amazon.com/ec2/spot/pricing/, 2025) and
// the dearest about $400 per hour (AWS u7in-32tb.224xlarge on demand;
// https://aws.amazon.com/ec2/pricing/on-demand/, 2025). A factor of 10 and 25 beyond them leaves
// room for new offers and still refuses a typo such as 1e-300 or a monthly price in an hourly
// column.
inline constexpr double kMinUsdPerHour = 1e-4;
inline constexpr double kMaxUsdPerHour = 1e4;

// The largest cluster one estimate may describe. Today's largest training clusters hold about
// 100,000 to 200,000 GPUs (Meta's Llama 3 used 16,384; xAI's Colossus 200,000); 2^18 = 262,144
// leaves room, and keeps the estimator's integer arithmetic on layouts far from overflow.
inline constexpr long long kMaxTotalDevices = 262144;

// The value as an error message shows it: at most 64 bytes (then "..."), with invalid UTF-8 and
// control characters replaced by '?', so a hostile value cannot make a message huge or break
// the JSON it is sent in. Every message that echoes a value from outside (a flag, a request, a
// data file) passes the value through here.
inline constexpr size_t kShownBytes = 64;
std::string Shown(std::string_view value, size_t max_bytes = kShownBytes);

bool IsValidUtf8(std::string_view text);

// A finite number in [min, max]: NaN and the infinities are refused by name. `unit` ("hours",
// "GiB") appears in the message when given.
Status CheckNumber(std::string_view field, double value, double min, double max,
                   std::string_view unit = "");
// Text as a finite decimal number in [min, max].
Status ParseNumber(std::string_view field, std::string_view text, double min, double max,
                   std::string_view unit, double* out);
// A count carried as a double that must be whole: finite, in [min, max], no fraction.
Status CheckWholeNumber(std::string_view field, double value, double min, double max,
                        std::string_view unit = "");
// Text as a whole number in [min, max]. "4096", "4096.0" and "4e3" are the same whole number;
// "2.5" is refused. The range is checked before the value is narrowed to an integer, so no
// text can wrap around.
Status ParseWholeNumber(std::string_view field, std::string_view text, long long min, long long max,
                        std::string_view unit, long long* out);

// A name: not empty after trimming, at most kMaxNameBytes, valid UTF-8, no control characters.
Status CheckName(std::string_view field, std::string_view text);
// Free text: at most max_bytes, valid UTF-8, no control characters except tab.
Status CheckText(std::string_view field, std::string_view text, size_t max_bytes = kMaxTextBytes);

// How deeply arrays and objects nest in JSON text, counted without parsing (brackets outside
// strings); 0 for a scalar. Linear in the text and uses no recursion.
int JsonNestingDepth(std::string_view text);
// Parses one JSON document of at most max_bytes, nested at most kMaxJsonDepth levels, in valid
// UTF-8. Errors start with `field`; a syntax error reads "<field>: <malformed>: <where and why>".
Status ParseJson(std::string_view field, std::string_view text, size_t max_bytes,
                 nlohmann::json* out, std::string_view malformed = "malformed JSON");
// Serialises JSON; a string that is not valid UTF-8 is written with U+FFFD in place of the bad
// bytes instead of throwing.
std::string DumpJson(const nlohmann::json& value, int indent = -1);

// An hourly price in `currency`, worth usd_per_unit US dollars per unit: finite and within
// [kMinUsdPerHour, kMaxUsdPerHour] once converted. With an empty `field` the message has no
// prefix, for callers that name the field themselves (CSV readers add file:line).
Status CheckPricePerHour(std::string_view field, double price, std::string_view currency,
                         double usd_per_unit);

// Devices in one estimate: GPUs per node (whole, or a slice below 1 given by an instance type)
// times nodes, at most kMaxTotalDevices.
Status CheckDeviceCount(std::string_view field, double gpus_per_node, long long nodes);

// Serving replicas one estimate may plan: 100,000 (a hundred times the largest public fleets of
// one model); a request rate that needs more is an error naming it, never an int that wraps.
inline constexpr long long kMaxServingReplicas = 100000;

// How many units of `per_unit` cover `demand`: ceil(demand / per_unit), as an int checked
// against `max` before it is narrowed. The error names `field` (the demand's field).
Status CountToCover(std::string_view field, double demand, double per_unit, long long max,
                    std::string_view what, int* out);

}  // namespace cloudfit

#endif  // CLOUDFIT_UTIL_VALIDATE_H_

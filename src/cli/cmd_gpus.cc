// cloudfit gpus: the accelerator catalog, as a table or one GPU in detail.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include "cli/cli_common.h"
#include "cloudfit/catalog_json.h"
#include "util/dtype_names.h"
#include "util/strings.h"
#include "util/validate.h"

namespace cloudfit::cli {

namespace {

struct GpusOptions {
  std::string name;
  std::string vendor;
  std::string architecture;
  std::optional<double> memory_min_gib;
  std::string sort = "name";
  FormatOptions format;
};

TableCell Tflops(const Accelerator& a, Precision p) {
  auto peak = a.peak(p);
  return peak ? TableCell(FormatNumber(*peak / 1e12, 1)) : TableCell::Unknown();
}

void PrintDetail(const Accelerator& a, const FormatOptions& format) {
  Table table({{"field", "field"}, {"value", "value"}});
  table.AddRow({"name", a.name});
  table.AddRow({"aliases", Join(a.aliases, ", ")});
  table.AddRow(
      {"vendor / architecture",
       a.vendor + " " + a.architecture +
           (a.compute_capability.empty() ? "" : " (compute " + a.compute_capability + ")")});
  table.AddRow({"form factor", a.form_factor});
  table.AddRow(
      {"memory", fmt::format("{} GiB {}, {} GB/s", FormatNumber(a.memory_gib(), 0), a.memory_type,
                             FormatNumber(a.memory_bandwidth_bytes_per_s / 1e9, 0))});
  for (int i = 0; i < kPrecisionCount; ++i) {
    Precision p = static_cast<Precision>(i);
    table.AddRow({"dense " + std::string(PrecisionName(p)),
                  a.peak(p) ? FormatNumber(*a.peak(p) / 1e12, 1) +
                                  (p == Precision::kInt8 ? " TOPS" : " TFLOPS")
                            : "not supported"});
  }
  table.AddRow({"NVLink", a.nvlink_bytes_per_s > 0
                              ? FormatNumber(a.nvlink_bytes_per_s / 1e9, 0) + " GB/s"
                              : "none"});
  table.AddRow({"PCIe", a.pcie_gen ? "gen " + std::to_string(a.pcie_gen) : "-"});
  table.AddRow({"TDP", FormatNumber(a.tdp_w, 0) + " W"});
  table.AddRow({"RT cores", std::to_string(a.rt_cores)});
  table.AddRow(
      {"NVENC", std::to_string(a.nvenc) + (a.av1_encode ? " (AV1 encode)" : " (no AV1 encode)")});
  table.AddRow({"vGPU", a.vgpu ? "supported" : "no"});
  table.AddRow({"launched", a.launch_year ? std::to_string(a.launch_year) : "-"});
  table.AddRow({"source", a.source + " (read " + a.as_of + ")"});
  if (!a.notes.empty()) table.AddRow({"notes", a.notes});
  PrintTable(table, format);
}

void Run(const GlobalOptions& global, GpusOptions& options) {
  options.sort = CanonicalDtypeName(options.sort);  // bfloat16 sorts as bf16
  const Catalog& catalog = LoadKeptCatalogOrThrow(global);
  if (!options.name.empty()) {
    const Accelerator* a = nullptr;
    ThrowIfError(catalog.FindAccelerator(options.name, &a));
    if (options.format.json) {
      PrintJson({{"schema", "cloudfit.gpu/v1"}, {"gpu", GpuToJson(*a)}});
    } else {
      PrintDetail(*a, options.format);
    }
    return;
  }
  static const std::vector<std::string> kSorts = {"name", "memory", "bandwidth", "fp32",
                                                  "fp16", "bf16",   "fp8",       "year"};
  if (std::find(kSorts.begin(), kSorts.end(), options.sort) == kSorts.end()) {
    throw CliError{"--sort: '" + Shown(options.sort) + "' is not one of " + Join(kSorts, ", ")};
  }
  std::vector<const Accelerator*> rows;
  for (const Accelerator& a : catalog.accelerators()) {
    if (!options.vendor.empty() && ToLower(a.vendor) != ToLower(options.vendor)) continue;
    if (!options.architecture.empty() && ToLower(a.architecture) != ToLower(options.architecture)) {
      continue;
    }
    if (options.memory_min_gib &&
        a.memory_bytes / (1024.0 * 1024 * 1024) < *options.memory_min_gib) {
      continue;
    }
    rows.push_back(&a);
  }
  auto key = [&](const Accelerator* a) -> double {
    const std::string& s = options.sort;
    if (s == "memory") return a->memory_bytes;
    if (s == "bandwidth") return a->memory_bandwidth_bytes_per_s;
    if (s == "year") return a->launch_year;
    Precision p;
    if (ParsePrecision(s, &p)) return a->peak(p).value_or(0);
    return 0;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const Accelerator* a, const Accelerator* b) {
    if (options.sort == "name") return a->name < b->name;
    if (key(a) != key(b)) return key(a) > key(b);  // biggest first
    return a->name < b->name;
  });
  if (options.format.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const Accelerator* a : rows) list.push_back(GpuToJson(*a));
    PrintJson({{"schema", "cloudfit.gpus/v1"}, {"count", rows.size()}, {"gpus", list}});
    return;
  }
  // Dense peak TFLOPS per precision (TOPS for int8); bandwidths in GB/s (10^9 bytes/s).
  Table table({{"name", "name"},
               {"architecture", "arch", false, 6},
               {"memory_gib", "mem GiB", true},
               {"memory_bandwidth_gb_per_s", "GB/s", true},
               {"fp32_tflops", "fp32", true, 3},
               {"tf32_tflops", "tf32", true, 4},
               {"fp16_tflops", "fp16", true},
               {"bf16_tflops", "bf16", true},
               {"fp8_tflops", "fp8", true, 2},
               {"int8_tops", "int8", true, 5},
               {"nvlink_gb_per_s", "nvlink", true, 7},
               {"tdp_w", "W", true, 8},
               {"launch_year", "year", true, 9}});
  for (const Accelerator* a : rows) {
    table.AddRow(
        {a->name, a->architecture, FormatNumber(a->memory_gib(), 0),
         FormatNumber(a->memory_bandwidth_bytes_per_s / 1e9, 0), Tflops(*a, Precision::kFp32),
         Tflops(*a, Precision::kTf32), Tflops(*a, Precision::kFp16), Tflops(*a, Precision::kBf16),
         Tflops(*a, Precision::kFp8), Tflops(*a, Precision::kInt8),
         FormatNumber(a->nvlink_bytes_per_s / 1e9, 0), FormatNumber(a->tdp_w, 0),
         a->launch_year ? TableCell(std::to_string(a->launch_year)) : TableCell::Unknown()});
  }
  PrintTable(table, options.format);
}

}  // namespace

void AddGpusCommand(CLI::App* app, const GlobalOptions* global) {
  auto options = std::make_shared<GpusOptions>();
  CLI::App* c = app->add_subcommand(
      "gpus", "List accelerators with their dense peak TFLOPS, memory and links, or show one");
  c->add_option("name", options->name, "Show one GPU in detail (any name or alias)");
  c->add_option("--vendor", options->vendor, "NVIDIA or AMD")->group(kGroupFilters);
  c->add_option("--architecture", options->architecture, "Ampere, Hopper, Ada Lovelace, ...")
      ->group(kGroupFilters);
  c->add_option("--gpu-memory-min", options->memory_min_gib, "Minimum memory per GPU, GiB")
      ->check(NumberIn(0, 1e6, "GiB"))
      ->group(kGroupFilters);
  c->add_option("--sort", options->sort, "name, memory, bandwidth, fp32, fp16, bf16, fp8, year")
      ->capture_default_str()
      ->group(kGroupOutput);
  AddFormatFlags(c, &options->format);
  c->callback([global, options]() { Run(*global, *options); });
}

}  // namespace cloudfit::cli

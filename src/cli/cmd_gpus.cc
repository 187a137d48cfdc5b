// cloudfit gpus: the accelerator catalog, as a table or one GPU in detail.
#include <algorithm>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/cli_common.h"
#include "cloudfit/catalog_json.h"
#include "util/strings.h"

namespace cloudfit::cli {

namespace {

struct GpusOptions {
  std::string name;
  std::string vendor;
  std::string architecture;
  std::optional<double> memory_min_gb;
  std::string sort = "name";
  FormatOptions format;
};

std::string Tflops(const Accelerator& a, Precision p) {
  auto peak = a.peak(p);
  return peak ? FormatNumber(*peak / 1e12, 1) : "-";
}

void PrintDetail(const Accelerator& a) {
  Table table({{"field", "field"}, {"value", "value"}});
  table.AddRow({"name", a.name});
  table.AddRow({"aliases", Join(a.aliases, ", ")});
  table.AddRow({"vendor / architecture", a.vendor + " " + a.architecture +
                                             (a.compute_capability.empty()
                                                  ? ""
                                                  : " (compute " + a.compute_capability + ")")});
  table.AddRow({"form factor", a.form_factor});
  table.AddRow({"memory", fmt::format("{} GB {}, {} GB/s", FormatNumber(a.memory_gib(), 0),
                                      a.memory_type,
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
  table.AddRow({"NVENC", std::to_string(a.nvenc) + (a.av1_encode ? " (AV1 encode)" : " (no AV1 encode)")});
  table.AddRow({"vGPU", a.vgpu ? "supported" : "no"});
  table.AddRow({"launched", a.launch_year ? std::to_string(a.launch_year) : "-"});
  table.AddRow({"source", a.source + " (read " + a.as_of + ")"});
  if (!a.notes.empty()) table.AddRow({"notes", a.notes});
  std::cout << table.Render(OutputFormat::kTable);
}

void Run(const GlobalOptions& global, const GpusOptions& options) {
  Catalog catalog = LoadCatalogOrThrow(global);
  if (!options.name.empty()) {
    const Accelerator* a = nullptr;
    ThrowIfError(catalog.FindAccelerator(options.name, &a));
    if (options.format.json) {
      PrintJson({{"schema", "cloudfit.gpu/v1"}, {"gpu", GpuToJson(*a)}});
    } else {
      PrintDetail(*a);
    }
    return;
  }
  static const std::vector<std::string> kSorts = {"name", "memory", "bandwidth", "fp32",
                                                  "fp16", "bf16",   "fp8",       "year"};
  if (std::find(kSorts.begin(), kSorts.end(), options.sort) == kSorts.end()) {
    throw CliError{"--sort: '" + options.sort + "' is not one of " + Join(kSorts, ", ")};
  }
  std::vector<const Accelerator*> rows;
  for (const Accelerator& a : catalog.accelerators()) {
    if (!options.vendor.empty() && ToLower(a.vendor) != ToLower(options.vendor)) continue;
    if (!options.architecture.empty() && ToLower(a.architecture) != ToLower(options.architecture)) {
      continue;
    }
    if (options.memory_min_gb && a.memory_bytes / (1024.0 * 1024 * 1024) < *options.memory_min_gb) {
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
  Table table({{"name", "name"},
               {"architecture", "arch"},
               {"memory_gb", "mem GB", true},
               {"bandwidth_gbps", "GB/s", true},
               {"fp32_tflops", "fp32", true},
               {"tf32_tflops", "tf32", true},
               {"fp16_tflops", "fp16", true},
               {"bf16_tflops", "bf16", true},
               {"fp8_tflops", "fp8", true},
               {"int8_tops", "int8", true},
               {"nvlink_gbps", "nvlink", true},
               {"tdp_w", "W", true},
               {"year", "year", true}});
  for (const Accelerator* a : rows) {
    table.AddRow({a->name, a->architecture, FormatNumber(a->memory_gib(), 0),
                  FormatNumber(a->memory_bandwidth_bytes_per_s / 1e9, 0),
                  Tflops(*a, Precision::kFp32), Tflops(*a, Precision::kTf32),
                  Tflops(*a, Precision::kFp16), Tflops(*a, Precision::kBf16),
                  Tflops(*a, Precision::kFp8), Tflops(*a, Precision::kInt8),
                  FormatNumber(a->nvlink_bytes_per_s / 1e9, 0), FormatNumber(a->tdp_w, 0),
                  a->launch_year ? std::to_string(a->launch_year) : "-"});
  }
  std::cout << table.Render(options.format.format());
}

}  // namespace

void AddGpusCommand(CLI::App* app, const GlobalOptions* global) {
  auto options = std::make_shared<GpusOptions>();
  CLI::App* c = app->add_subcommand(
      "gpus", "List accelerators with their dense peak TFLOPS, memory and links, or show one");
  c->add_option("name", options->name, "Show one GPU in detail (any name or alias)");
  c->add_option("--vendor", options->vendor, "NVIDIA or AMD");
  c->add_option("--architecture", options->architecture, "Ampere, Hopper, Ada Lovelace, ...");
  c->add_option("--memory-min", options->memory_min_gb, "Minimum memory, GB")
      ->check(NumberIn(0, 1e6, "GB"));
  c->add_option("--sort", options->sort, "name, memory, bandwidth, fp32, fp16, bf16, fp8, year")
      ->capture_default_str();
  AddFormatFlags(c, &options->format);
  c->callback([global, options]() { Run(*global, *options); });
}

}  // namespace cloudfit::cli

// cloudfit estimate: a workload on one hardware choice, with memory, time and scaling broken
// down; or many cases from a JSON Lines file, one result per line.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <memory>

#include "cli/cli_common.h"
#include "cloudfit/estimate.h"
#include "cloudfit/estimate_json.h"
#include "cloudfit/request.h"
#include "util/strings.h"
#include "util/validate.h"

namespace cloudfit::cli {

namespace {

struct EstimateOptions {
  WorkloadFlags workload;
  CalibrationFlags calibration;
  HardwareSpec hardware;
  bool explain = false;
  FormatOptions format;
  std::string jsonl;
  TaskFlags task;
};

constexpr double kGiB = 1024.0 * 1024 * 1024;

void PrintText(const Workload& w, const Estimate& e, bool explain) {
  std::cout << fmt::format("estimate: {} {} on {} ({})\n",
                           w.model.name.empty() ? "-" : w.model.name, WorkloadKindName(w.kind),
                           e.hardware, NumericFormatName(w.precision));
  if (!w.assumptions.empty()) {
    std::cout << "assumptions (give the field to change one):\n";
    for (const Assumption& a : w.assumptions) {
      std::cout << fmt::format("  {} = {}: {}\n", a.field, a.value, a.why);
    }
  }
  const MemoryBreakdown& m = e.memory;
  std::cout << fmt::format("fits: {}  {:.1f} of {:.1f} GiB per device ({:.0f}%)\n",
                           e.fits ? "yes" : "NO", m.total_bytes() / kGiB, m.capacity_bytes / kGiB,
                           m.capacity_bytes > 0 ? 100 * m.total_bytes() / m.capacity_bytes : 0);
  Table memory({{"component", "memory per device"}, {"gib", "GiB", true}});
  std::pair<const char*, double> parts[] = {{"weights", m.weights_bytes},
                                            {"gradients", m.gradients_bytes},
                                            {"optimizer state", m.optimizer_bytes},
                                            {"activations", m.activations_bytes},
                                            {"KV cache", m.kv_cache_bytes},
                                            {"communication buffers", m.comm_buffers_bytes},
                                            {"runtime (CUDA, allocator)", m.runtime_bytes}};
  for (const auto& [name, bytes] : parts) memory.AddRow({name, FormatNumber(bytes / kGiB, 2)});
  std::cout << memory.Render(OutputFormat::kTable);
  const TimeBreakdown& t = e.time;
  if (e.runs_on_gpu || t.step_s > 0) {
    Table time({{"component", "time per step"}, {"s", "s", true}});
    std::pair<const char*, double> steps[] = {{"forward pass", t.forward_s},
                                              {"backward pass", t.backward_s},
                                              {"  of which compute", t.compute_s},
                                              {"  of which memory traffic", t.memory_s},
                                              {"communication (exposed)", t.communication_s},
                                              {"pipeline bubble", t.bubble_s},
                                              {"optimizer", t.optimizer_s},
                                              {"input pipeline (parallel)", t.input_s},
                                              {"step", t.step_s}};
    for (const auto& [name, s] : steps) time.AddRow({name, FormatNumber(s, 4)});
    std::cout << time.Render(OutputFormat::kTable);
  }
  const Layout& l = e.layout;
  if (w.is_training()) {
    std::cout << fmt::format(
        "layout: data {} (ZeRO {}) x tensor {} x pipeline {}; micro-batch {}, global batch {}, "
        "{} accumulation step(s)\n",
        l.data_parallel, l.zero_stage, l.tensor_parallel, l.pipeline_parallel, l.micro_batch,
        l.global_batch, l.grad_accumulation);
  }
  std::cout << fmt::format("throughput: {} {}\n", FormatNumber(e.throughput, 1), e.throughput_unit);
  if (e.total_s > 0) {
    std::cout << fmt::format("total: {} h\n", FormatNumber(e.total_s / 3600, 2));
  }
  std::cout << fmt::format("bottleneck: {}\n", e.bottleneck);
  if (e.scaling_efficiency < 0.999) {
    std::cout << fmt::format("scaling efficiency: {:.0f}%\n", 100 * e.scaling_efficiency);
  }
  if (e.serving) {
    const ServingFigures& s = *e.serving;
    std::cout << fmt::format(
        "serving ({}): {} cop{} per replica (tensor parallel {}, pipeline {}), up to {} "
        "sequences each, KV capacity {:.0f} tokens\n",
        s.engine, s.copies, s.copies == 1 ? "y" : "ies", s.tensor_parallel, s.pipeline_parallel,
        s.max_batch, s.kv_capacity_tokens);
    if (w.kind == WorkloadKind::kServing) {
      std::cout << fmt::format(
          "at {} requests/s: {} replica(s), {:.0f}% of saturation, batch {} per copy; "
          "p{:.0f} TTFT {} ms, TPOT {} ms (median {} ms, {} ms){}\n",
          FormatNumber(w.request_rate, 2), s.replicas, 100 * s.utilisation,
          FormatNumber(s.batch_at_load, 1), 100 * s.percentile, FormatNumber(s.ttft_s * 1e3, 1),
          FormatNumber(s.tpot_s * 1e3, 2), FormatNumber(s.ttft_median_s * 1e3, 1),
          FormatNumber(s.tpot_median_s * 1e3, 2), s.meets_targets ? "" : " (MISSES TARGET)");
      std::cout << fmt::format(
          "per replica: {} requests/s planned (bound by {}), {} at saturation, {} tokens/s\n",
          FormatNumber(s.requests_per_s, 2), s.sized_by,
          FormatNumber(s.saturation_requests_per_s, 2), FormatNumber(s.tokens_per_s, 0));
    } else {
      std::cout << fmt::format("batch {}: TTFT {} ms, TPOT {} ms, {} tokens/s{}\n", s.max_batch,
                               FormatNumber(s.ttft_s * 1e3, 1), FormatNumber(s.tpot_s * 1e3, 2),
                               FormatNumber(s.tokens_per_s, 0),
                               s.meets_targets ? "" : " (MISSES TARGET)");
    }
  }
  if (e.render) {
    const RenderFigures& r = *e.render;
    if (r.seconds_per_frame > 0) {
      std::cout << fmt::format("render: {} s per frame per GPU, {} frames/h\n",
                               FormatNumber(r.seconds_per_frame, 1),
                               FormatNumber(r.frames_per_hour, 1));
    }
    if (w.kind != WorkloadKind::kRender) {
      std::cout << fmt::format("streams per GPU: {} (AV1 encode: {})\n", r.streams_per_gpu,
                               r.av1_available ? "yes" : "no");
    }
  }
  for (const std::string& n : e.notes) std::cout << "note: " << n << "\n";
  for (const std::string& basis : w.calibration.basis) {
    std::cout << "calibrated from " << basis << "\n";
  }
  if (e.calibration_scale) {
    std::cout << fmt::format(
        "calibration on this hardware: compute x {:.3g}, memory bandwidth x {:.3g}\n",
        e.calibration_scale->compute, e.calibration_scale->bandwidth);
  }
  if (explain) {
    Table terms({{"term", "term"}, {"value", "value", true}, {"unit", "unit"}, {"how", "from"}});
    for (const Term& term : e.terms) {
      terms.AddRow({term.name, FormatNumber(term.value, 4), term.unit, term.formula});
    }
    std::cout << "\n" << terms.Render(OutputFormat::kTable);
  }
}

// One JSON Lines case: workload fields plus gpu/gpus/instance/nodes and an optional id.
nlohmann::json RunLine(const Catalog& catalog, const nlohmann::json& in) {
  nlohmann::json out = nlohmann::json::object();
  if (in.contains("id")) out["id"] = in["id"];
  auto fail = [&](const std::string& message) {
    out["ok"] = false;
    out["error"] = message;
    return out;
  };
  Workload w;
  HardwareSpec spec;
  nlohmann::json fields = nlohmann::json::object();
  for (const auto& [key, value] : in.items()) {
    std::string text = value.is_string() ? value.get<std::string>() : DumpJson(value);
    if (key == "id") continue;
    if (key == "gpu") {
      spec.gpu = text;
    } else if (key == "instance") {
      spec.instance = text;
    } else if (key == "gpus") {
      Status s = ParseNumber("gpus", text, 0, 1e9, "GPUs", &spec.gpus);
      if (!s.ok()) return fail(s.message());
    } else if (key == "nodes") {
      long long nodes = 0;
      Status s = ParseWholeNumber("nodes", text, 1, 100000, "nodes", &nodes);
      if (!s.ok()) return fail(s.message());
      spec.nodes = static_cast<int>(nodes);
    } else {
      fields[key] = value;
    }
  }
  Hardware hw;
  Estimate e;
  // The workload decoder every entry point shares (cloudfit/request.h).
  Status s = DecodeWorkload(catalog, fields, "", &w);
  if (s.ok()) s = ResolveHardware(catalog, spec, &hw);
  if (s.ok()) s = EstimateWorkload(catalog, w, hw, &e);
  if (!s.ok()) return fail(s.message());
  out["ok"] = true;
  out["estimate"] = EstimateToJson(w, e);
  return out;
}

void Run(const GlobalOptions& global, const EstimateOptions& o) {
  const Catalog& catalog = LoadKeptCatalogOrThrow(global);
  if (!o.jsonl.empty()) {
    int failures = RunJsonLinesFrom(
        o.jsonl, [&](const nlohmann::json& request) { return RunLine(catalog, request); });
    if (failures > 0) {
      std::cout.flush();
      throw CliError{fmt::format("{} case(s) failed; see their \"error\" fields", failures)};
    }
    return;
  }
  Workload w = BuildWorkload(o.workload);
  ThrowIfError(FinalizeWorkload(catalog, &w));
  ApplyCalibrationFlags(catalog, o.calibration, &w);
  HardwareSpec spec = o.hardware;
  ApplyTaskFlags(catalog, o.task, &spec);
  Hardware hw;
  ThrowIfError(ResolveHardware(catalog, spec, &hw));
  Estimate e;
  ThrowIfError(EstimateWorkload(catalog, w, hw, &e));
  if (o.format.json) {
    std::cout << EstimateJsonText(w, e, 2) << "\n";  // as PrintJson writes documents
  } else if (o.format.format() != OutputFormat::kTable) {
    PrintTable(DocumentTable(EstimateToJson(w, e)), o.format);
  } else {
    PrintText(w, e, o.explain);
  }
}

}  // namespace

void AddEstimateCommand(CLI::App* app, const GlobalOptions* global) {
  auto options = std::make_shared<EstimateOptions>();
  CLI::App* c = app->add_subcommand(
      "estimate", "Memory, time and scaling of a workload on one GPU, GPU count or instance");
  AddWorkloadFlags(c, &options->workload);
  AddCalibrationFlags(c, &options->calibration);
  AddTaskFlag(c, &options->task);
  c->add_option("--gpu", options->hardware.gpu, "GPU model (any name or alias); A100:8 sets --gpus")
      ->group(kGroupHardware);
  c->add_option("--gpus", options->hardware.gpus, "GPUs per node with --gpu")
      ->check(FiniteNumber())
      ->capture_default_str()
      ->group(kGroupHardware);
  c->add_option("--instance", options->hardware.instance, "Instance type (fixes GPUs, vCPUs, RAM)")
      ->group(kGroupHardware);
  c->add_option("--nodes", options->hardware.nodes, "Nodes")
      ->check(WholeIn(1, 100000, "nodes"))
      ->capture_default_str()
      ->group(kGroupHardware);
  c->add_option("--network-gbps", options->hardware.network_gbps,
                "Network between nodes, Gbit/s per node (default: the instance's, or 200 per "
                "GPU for SXM boards, 25 otherwise)")
      ->check(NumberIn(0, 1e6, "Gbit/s"))
      ->group(kGroupHardware);
  c->add_flag("--explain", options->explain, "Show the terms behind each number")
      ->group(kGroupOutput);
  AddFormatFlags(c, &options->format);
  c->add_option("--jsonl", options->jsonl,
                "Read cases from a JSON Lines file ('-' for stdin), one JSON result per line")
      ->group(kGroupOutput);
  c->callback([global, options]() { Run(*global, *options); });
}

}  // namespace cloudfit::cli

#include "cloudfit/probe_report.h"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>

#include "cloudfit/hardware.h"
#include "cloudfit/table.h"

namespace cloudfit {

namespace {

std::string FormatRate(double value, const std::string& unit) {
  if (unit == "FLOP/s") {
    if (value >= 1e12) return fmt::format("{:.1f} TFLOP/s", value / 1e12);
    return fmt::format("{:.1f} GFLOP/s", value / 1e9);
  }
  if (value >= 1e12) return fmt::format("{:.2f} TB/s", value / 1e12);
  return fmt::format("{:.1f} GB/s", value / 1e9);
}

Precision PrecisionOf(const std::string& name) {
  Precision p = Precision::kFp32;
  ParsePrecision(name, &p);
  return p;
}

std::string Upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}

// The per-direction bandwidth of the link between two GPUs of the same model.
double LinkPeak(const Accelerator& gpu, bool peer_access, std::string* basis) {
  if (peer_access && gpu.nvlink_bytes_per_s > 0) {
    *basis = "NVLink, one direction";
    return gpu.nvlink_bytes_per_s / 2;
  }
  int gen = gpu.pcie_gen > 0 ? gpu.pcie_gen : 3;
  *basis = fmt::format("PCIe gen {} x16", gen);
  return PcieBytesPerSecond(gen);
}

void AddCpuFigures(const Catalog& catalog, const ProbeResult& r, std::vector<ProbeFigure>* out) {
  const CpuGeneration* gen = MatchCpuGeneration(catalog, r.cpu);
  if (r.cpu_gemm) {
    ProbeFigure f{"CPU", "FP32 GEMM", r.cpu_gemm->flops_per_s, "FLOP/s", {}, "", r.cpu_gemm->library};
    if (gen != nullptr) {
      double per_thread = Fp32PeakPerThread(*gen, r.cpu.logical_cpus, r.cpu.physical_cores);
      f.peak = per_thread * r.cpu_gemm->threads;
      f.peak_basis = fmt::format("{} {} x {:.1f} GFLOP/s ({})", r.cpu_gemm->threads,
                                 per_thread > gen->fp32_flops_per_vcpu ? "whole cores" : "vCPUs",
                                 per_thread / 1e9, gen->name);
    }
    out->push_back(f);
  }
  if (r.cpu_bandwidth) {
    ProbeFigure f{"CPU", "memory triad", r.cpu_bandwidth->bytes_per_s, "B/s", {}, "", ""};
    if (gen != nullptr && gen->memory_bandwidth_bytes_per_s_per_socket > 0) {
      int sockets = std::max(1, r.cpu.sockets);
      f.peak = gen->memory_bandwidth_bytes_per_s_per_socket * sockets;
      f.peak_basis = fmt::format("{} socket(s) of {}", sockets, gen->memory_type);
      int socket_threads = gen->cores_per_socket * std::max(1, gen->threads_per_core);
      if (socket_threads > 0 && r.cpu.usable_cpus < socket_threads) {
        f.note = "a VM with part of a socket gets part of its memory channels";
      }
    }
    out->push_back(f);
  }
  if (r.read) {
    out->push_back({"disk", "read " + r.read->path, r.read->bytes_per_s, "B/s", {}, "",
                    r.read->page_cache_dropped ? "" : "page cache could not be dropped"});
  }
}

void AddGpuFigures(const Catalog& catalog, const GpuSystemProbe& g, std::vector<ProbeFigure>* out) {
  const Accelerator* first = nullptr;
  for (const GpuDeviceProbe& d : g.devices) {
    const Accelerator* acc = catalog.FindAcceleratorByDriverName(d.name);
    if (first == nullptr) first = acc;
    std::string subject = fmt::format("GPU {}", d.index);
    for (const GpuGemmResult& gemm : d.gemm) {
      ProbeFigure f{subject, Upper(gemm.precision) + " GEMM", gemm.flops_per_s, "FLOP/s",
                    {}, "", gemm.supported ? gemm.note : "not measured: " + gemm.note};
      if (acc != nullptr) {
        f.peak = acc->peak(PrecisionOf(gemm.precision));
        if (f.peak) f.peak_basis = acc->name + " dense";
      }
      out->push_back(f);
    }
    auto add_bandwidth = [&](const std::string& measure, double value, std::optional<double> peak,
                             std::string basis) {
      if (value <= 0) return;
      out->push_back({subject, measure, value, "B/s", peak, peak ? basis : "", ""});
    };
    if (acc != nullptr) {
      int gen = acc->pcie_gen > 0 ? acc->pcie_gen : 3;
      add_bandwidth("device copy (read + write)", d.device_copy_bytes_per_s,
                    acc->memory_bandwidth_bytes_per_s, acc->name + " " + acc->memory_type);
      add_bandwidth("host to device", d.host_to_device_bytes_per_s, PcieBytesPerSecond(gen),
                    fmt::format("PCIe gen {} x16", gen));
      add_bandwidth("device to host", d.device_to_host_bytes_per_s, PcieBytesPerSecond(gen),
                    fmt::format("PCIe gen {} x16", gen));
    } else {
      add_bandwidth("device copy (read + write)", d.device_copy_bytes_per_s, {}, "");
      add_bandwidth("host to device", d.host_to_device_bytes_per_s, {}, "");
      add_bandwidth("device to host", d.device_to_host_bytes_per_s, {}, "");
    }
  }
  for (const GpuPeerResult& p : g.peers) {
    ProbeFigure f{fmt::format("GPU {} -> {}", p.from, p.to), "peer copy", p.bytes_per_s, "B/s",
                  {}, "", p.peer_access ? "" : "no peer access: staged through the host"};
    if (first != nullptr) f.peak = LinkPeak(*first, p.peer_access, &f.peak_basis);
    out->push_back(f);
  }
  if (g.allreduce_bus_bytes_per_s) {
    ProbeFigure f{"all GPUs", "NCCL all-reduce (bus)", *g.allreduce_bus_bytes_per_s, "B/s", {}, "",
                  fmt::format("{:.0f} MiB per rank", g.allreduce_message_bytes / 1048576)};
    bool all_peer = std::all_of(g.peers.begin(), g.peers.end(),
                                [](const GpuPeerResult& p) { return p.peer_access; });
    if (first != nullptr) f.peak = LinkPeak(*first, all_peer, &f.peak_basis);
    out->push_back(f);
  }
}

nlohmann::json OptionalNumber(std::optional<double> v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

std::vector<ProbeFigure> ProbeFigures(const Catalog& catalog, const ProbeResult& result) {
  std::vector<ProbeFigure> figures;
  AddCpuFigures(catalog, result, &figures);
  if (result.gpu && result.gpu->available) AddGpuFigures(catalog, *result.gpu, &figures);
  return figures;
}

nlohmann::json ProbeToJson(const Catalog& catalog, const ProbeResult& r) {
  using nlohmann::json;
  const CpuGeneration* gen = MatchCpuGeneration(catalog, r.cpu);
  json cpu = {{"vendor", r.cpu.vendor},
              {"model_name", r.cpu.model_name},
              {"arch", r.cpu.arch},
              {"logical_cpus", r.cpu.logical_cpus},
              {"physical_cores", r.cpu.physical_cores},
              {"sockets", r.cpu.sockets},
              {"usable_cpus", r.cpu.usable_cpus},
              {"features", r.cpu.features},
              {"widest_isa", r.cpu.widest_isa},
              {"catalog_generation", gen != nullptr ? json(gen->name) : json(nullptr)}};
  if (r.cpu_gemm) {
    cpu["gemm_fp32"] = {{"flops_per_s", r.cpu_gemm->flops_per_s},
                        {"size", r.cpu_gemm->size},
                        {"threads", r.cpu_gemm->threads},
                        {"library", r.cpu_gemm->library}};
  }
  if (r.cpu_bandwidth) {
    cpu["memory_triad"] = {{"bytes_per_s", r.cpu_bandwidth->bytes_per_s},
                           {"array_bytes", r.cpu_bandwidth->array_bytes},
                           {"threads", r.cpu_bandwidth->threads}};
  }
  cpu["others_busy_fraction"] = r.others_busy_fraction;
  json doc = {{"schema", "cloudfit.probe/v1"}, {"cpu", cpu}};
  if (r.read) {
    doc["read"] = {{"path", r.read->path},
                   {"bytes", r.read->bytes},
                   {"seconds", r.read->seconds},
                   {"bytes_per_s", r.read->bytes_per_s},
                   {"files", r.read->files},
                   {"page_cache_dropped", r.read->page_cache_dropped}};
  }
  if (r.gpu) {
    const GpuSystemProbe& g = *r.gpu;
    json devices = json::array();
    for (const GpuDeviceProbe& d : g.devices) {
      const Accelerator* acc = catalog.FindAcceleratorByDriverName(d.name);
      json gemm = json::array();
      for (const GpuGemmResult& m : d.gemm) {
        gemm.push_back({{"precision", m.precision},
                        {"supported", m.supported},
                        {"flops_per_s", m.flops_per_s},
                        {"size", m.size},
                        {"note", m.note}});
      }
      devices.push_back({{"index", d.index},
                         {"name", d.name},
                         {"catalog_name", acc != nullptr ? json(acc->name) : json(nullptr)},
                         {"uuid", d.uuid},
                         {"compute_capability", d.compute_capability},
                         {"memory_bytes", d.memory_bytes},
                         {"sm_count", d.sm_count},
                         {"gemm", gemm},
                         {"device_copy_bytes_per_s", d.device_copy_bytes_per_s},
                         {"host_to_device_bytes_per_s", d.host_to_device_bytes_per_s},
                         {"device_to_host_bytes_per_s", d.device_to_host_bytes_per_s},
                         {"notes", d.notes}});
    }
    json peers = json::array();
    for (const GpuPeerResult& p : g.peers) {
      peers.push_back({{"from", p.from},
                       {"to", p.to},
                       {"peer_access", p.peer_access},
                       {"bytes_per_s", p.bytes_per_s}});
    }
    doc["gpu"] = {{"available", g.available},
                  {"unavailable_reason", g.unavailable_reason},
                  {"driver_version", g.driver_version},
                  {"cuda_driver_version", g.cuda_driver_version},
                  {"cublas_version", g.cublas_version},
                  {"nccl_version", g.nccl_version},
                  {"devices", devices},
                  {"peers", peers},
                  {"allreduce_bus_bytes_per_s", OptionalNumber(g.allreduce_bus_bytes_per_s)},
                  {"allreduce_message_bytes", g.allreduce_message_bytes},
                  {"notes", g.notes}};
  }
  json figures = json::array();
  for (const ProbeFigure& f : ProbeFigures(catalog, r)) {
    figures.push_back({{"subject", f.subject},
                       {"measure", f.measure},
                       {"measured", f.measured},
                       {"unit", f.unit},
                       {"peak", OptionalNumber(f.peak)},
                       {"peak_basis", f.peak_basis},
                       {"percent_of_peak",
                        f.peak && *f.peak > 0 ? json(100 * f.measured / *f.peak) : json(nullptr)},
                       {"note", f.note}});
  }
  doc["figures"] = figures;
  return doc;
}

std::string FormatProbeText(const Catalog& catalog, const ProbeResult& r) {
  std::ostringstream out;
  const CpuGeneration* gen = MatchCpuGeneration(catalog, r.cpu);
  out << fmt::format("CPU: {} ({}), {} usable of {} logical CPUs", r.cpu.model_name, r.cpu.arch,
                     r.cpu.usable_cpus, r.cpu.logical_cpus);
  if (r.cpu.physical_cores > 0) {
    out << fmt::format(", {} cores in {} socket(s)", r.cpu.physical_cores, r.cpu.sockets);
  }
  out << "\n";
  std::string features;
  for (const std::string& f : r.cpu.features) features += (features.empty() ? "" : " ") + f;
  out << fmt::format("ISA: {} ({})\n", r.cpu.widest_isa.empty() ? "scalar" : r.cpu.widest_isa,
                     features.empty() ? "no vector flags" : features);
  out << fmt::format("catalog: {}\n", gen != nullptr
                                          ? gen->name
                                          : std::string("no matching CPU generation; no peaks"));
  if (r.gpu) {
    const GpuSystemProbe& g = *r.gpu;
    if (!g.available) {
      out << "GPU: none measured (" << g.unavailable_reason << "); the CPU was measured\n";
    } else {
      out << fmt::format("GPU: driver {}, CUDA {}, cuBLASLt {}, NCCL {}\n",
                         g.driver_version.empty() ? "?" : g.driver_version,
                         g.cuda_driver_version.empty() ? "?" : g.cuda_driver_version,
                         g.cublas_version.empty() ? "not found" : g.cublas_version,
                         g.nccl_version.empty() ? "not found" : g.nccl_version);
      for (const GpuDeviceProbe& d : g.devices) {
        const Accelerator* acc = catalog.FindAcceleratorByDriverName(d.name);
        out << fmt::format("GPU {}: {}, {:.1f} GiB, compute capability {}, {} SMs; catalog: {}\n",
                           d.index, d.name, d.memory_bytes / 1073741824.0, d.compute_capability,
                           d.sm_count, acc != nullptr ? acc->name : "no match, no peaks");
      }
    }
  }
  out << "\n";
  Table table({{"subject", "subject", false},
               {"measure", "measure", false},
               {"measured", "measured", true},
               {"peak", "catalog peak", true},
               {"percent", "of peak", true},
               {"basis", "peak is", false},
               {"note", "note", false}});
  for (const ProbeFigure& f : ProbeFigures(catalog, r)) {
    bool measured = f.measured > 0;
    table.AddRow({f.subject, f.measure, measured ? FormatRate(f.measured, f.unit) : "-",
                  f.peak ? FormatRate(*f.peak, f.unit) : "-",
                  f.peak && measured ? fmt::format("{:.0f}%", 100 * f.measured / *f.peak) : "-",
                  f.peak_basis, f.note});
  }
  out << table.Render(OutputFormat::kTable);
  // Above a tenth, others' work shows in the figures (two busy threads halve a 2-vCPU probe).
  if (r.others_busy_fraction > 0.1) {
    out << fmt::format(
        "warning: other processes used {:.0f}% of the CPUs while the CPU was measured; its "
        "figures are low by about that much. Probe an idle machine.\n",
        100 * r.others_busy_fraction);
  }
  if (r.gpu) {
    for (const std::string& note : r.gpu->notes) out << "note: " << note << "\n";
    for (const GpuDeviceProbe& d : r.gpu->devices) {
      for (const std::string& note : d.notes) out << fmt::format("note: GPU {}: {}\n", d.index, note);
    }
  }
  return out.str();
}

}  // namespace cloudfit

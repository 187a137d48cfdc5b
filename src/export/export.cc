#include "cloudfit/export.h"

#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "cloudfit/catalog.h"
#include "cloudfit/skypilot_task.h"
#include "cloudfit/table.h"
#include "export/export_internal.h"
#include "util/date.h"
#include "util/strings.h"

namespace cloudfit {

namespace {

// Below this share of a GPU is a vGPU slice, which Kubernetes' device plugin cannot request.
bool WholeGpus(double count) { return std::fabs(count - std::round(count)) < 1e-6; }

}  // namespace

bool ParseExportFormat(std::string_view name, ExportFormat* out) {
  std::string n = ToLower(Trim(name));
  if (n == "skypilot" || n == "sky") *out = ExportFormat::kSkyPilot;
  else if (n == "terraform" || n == "tf") *out = ExportFormat::kTerraform;
  else if (n == "kubernetes" || n == "k8s") *out = ExportFormat::kKubernetes;
  else return false;
  return true;
}

std::string_view ExportFormatName(ExportFormat format) {
  switch (format) {
    case ExportFormat::kSkyPilot: return "skypilot";
    case ExportFormat::kTerraform: return "terraform";
    case ExportFormat::kKubernetes: return "kubernetes";
  }
  return "skypilot";
}

std::string ResourceName(std::string_view text) {
  std::string name;
  for (char ch : text) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (std::isalnum(c)) {
      name += static_cast<char>(std::tolower(c));
    } else if (!name.empty() && name.back() != '-') {
      name += '-';
    }
  }
  if (name.size() > 63) name.resize(63);
  while (!name.empty() && name.back() == '-') name.pop_back();
  if (name.empty() || !std::isalpha(static_cast<unsigned char>(name.front()))) {
    name = "cf-" + name;
    if (name.size() > 63) name.resize(63);
    while (name.back() == '-') name.pop_back();
  }
  return name;
}

ExportTarget ExportTargetFromCandidate(const Workload& w, const Candidate& c,
                                       const std::string& currency) {
  ExportTarget t;
  t.instance = c.instance;
  t.region = c.region;
  t.mode = c.mode;
  t.nodes = c.nodes;
  t.serving = w.kind == WorkloadKind::kServing;
  t.replicas = c.replicas;
  t.autoscaling = c.autoscaling;
  if (c.estimate && c.estimate->serving) {
    t.requests_per_s_per_replica = c.estimate->serving->requests_per_s;
  }
  std::string model = w.model.name.empty() ? std::string() : "-" + w.model.name;
  t.name = ResourceName("cloudfit-" + std::string(WorkloadKindName(w.kind)) + model);
  const InstanceType& type = *c.instance;
  t.summary.push_back(fmt::format(
      "{} {} on {}{} ({}) in {}/{}, {}", WorkloadKindName(w.kind),
      w.model.name.empty() ? "workload" : w.model.name, c.nodes > 1 ? fmt::format("{} x ", c.nodes) : "",
      type.name,
      type.has_gpu() ? fmt::format("{} x {}", FormatNumberShort(type.gpu_count), type.gpu_name())
                     : fmt::format("{} vCPUs", type.vcpus),
      type.provider, c.region ? c.region->region : "-", PricingModeName(c.mode)));
  if (t.serving) {
    t.summary.push_back(fmt::format(
        "predicted: {} replica(s) for {} requests/s{}{}", c.replicas, FormatNumber(w.request_rate, 2),
        t.requests_per_s_per_replica
            ? fmt::format(", {} requests/s per replica", FormatNumber(*t.requests_per_s_per_replica, 2))
            : "",
        c.price_per_hour ? fmt::format(", {} {}/h", FormatNumber(*c.price_per_hour, 2), currency) : ""));
  } else {
    t.summary.push_back(fmt::format(
        "predicted: {} h{}{}", FormatNumber(c.hours, 2),
        c.total_cost ? fmt::format(", {} {} in total", FormatNumber(*c.total_cost, 2), currency) : "",
        c.price_per_hour ? fmt::format(" ({} {}/h)", FormatNumber(*c.price_per_hour, 2), currency) : ""));
  }
  if (c.region && c.region->as_of_days > 0) {
    t.summary.push_back("price as published on " + FormatIsoDate(c.region->as_of_days) +
                        "; check it before launching");
  }
  return t;
}

Status ExportTargetForInstance(const Catalog& catalog, const std::string& instance,
                               const std::string& region, PricingMode mode, ExportTarget* out) {
  const InstanceType* type = nullptr;
  Status s = catalog.FindInstance(instance, &type);
  if (!s.ok()) return Status::NotFound("--instance: " + s.message());
  *out = ExportTarget();
  out->instance = type;
  out->mode = mode;
  if (!region.empty()) {
    out->region = type->FindRegion(region);
    if (out->region == nullptr) {
      std::vector<std::string> regions;
      for (const RegionPrice& r : type->regions) regions.push_back(r.region);
      std::string suggestion = DidYouMean(ClosestNames(region, regions));
      return Status::NotFound(fmt::format("--region: {} is not offered in '{}' in the catalog{} Regions: {}",
                                          type->name, region,
                                          suggestion.empty() ? "." : suggestion,
                                          Join(regions, ", ")));
    }
  } else {
    for (const RegionPrice& r : type->regions) {
      if (r.price(mode)) {
        out->region = &r;
        break;
      }
    }
    if (out->region == nullptr && !type->regions.empty()) out->region = &type->regions.front();
  }
  out->name = ResourceName("cloudfit-" + type->name);
  out->summary.push_back(fmt::format(
      "{} ({}) in {}/{}, {}", type->name,
      type->has_gpu() ? fmt::format("{} x {}", FormatNumberShort(type->gpu_count), type->gpu_name())
                      : fmt::format("{} vCPUs", type->vcpus),
      type->provider, out->region ? out->region->region : "-", PricingModeName(mode)));
  if (out->region) {
    std::optional<double> price = out->region->price(mode);
    out->summary.push_back(
        price ? fmt::format("catalog price: {} {}/h per node, published {}", FormatNumber(*price, 4),
                            out->region->currency, FormatIsoDate(out->region->as_of_days))
              : fmt::format("the catalog has no {} price for this region", PricingModeName(mode)));
  }
  return Status::OK();
}

Status Export(const ExportTarget& t, ExportFormat format, std::string* out) {
  if (t.instance == nullptr) return Status::InvalidArgument("export: no instance chosen");
  if (t.nodes < 1 || t.nodes > 4096) {
    return Status::InvalidArgument(fmt::format("--nodes: {} is not allowed; 1 to 4096", t.nodes));
  }
  if (t.replicas < 1 || t.replicas > 10000) {
    return Status::InvalidArgument(fmt::format("--replicas: {} is not allowed; 1 to 10000", t.replicas));
  }
  if (t.disk_gb < 1 || t.disk_gb > 65536) {
    return Status::InvalidArgument(
        fmt::format("--disk-gb: {} is not allowed; a whole number of GB from 1 to 65536", t.disk_gb));
  }
  if (t.name.empty() || t.name != ResourceName(t.name)) {
    return Status::InvalidArgument("--name: '" + t.name +
                                   "' is not allowed; lower-case letters, digits and '-', starting "
                                   "with a letter, at most 63 characters");
  }
  const InstanceType& type = *t.instance;
  switch (format) {
    case ExportFormat::kSkyPilot:
      if (SkyPilotCloudName(type.provider).empty()) {
        return Status::InvalidArgument(fmt::format(
            "--format skypilot: SkyPilot has no '{}' cloud (it runs AWS, GCP, Azure and Lambda "
            "among cloudfit's providers); export terraform or kubernetes instead",
            type.provider));
      }
      return export_internal::WriteSkyPilot(t, out);
    case ExportFormat::kTerraform:
      return export_internal::WriteTerraform(t, out);
    case ExportFormat::kKubernetes:
      if (type.has_gpu() && !WholeGpus(type.gpu_count)) {
        return Status::InvalidArgument(fmt::format(
            "--format kubernetes: {} has {} of a {} (a vGPU slice); Kubernetes' NVIDIA device "
            "plugin requests whole GPUs", type.name, FormatNumberShort(type.gpu_count), type.gpu_name()));
      }
      return export_internal::WriteKubernetes(t, out);
  }
  return Status::InvalidArgument("export: unknown format");
}

namespace export_internal {

std::string YamlString(std::string_view text) {
  static const char* const kReserved[] = {"true", "false", "yes", "no", "on", "off", "null", "~", "y", "n"};
  bool plain = !text.empty() && text.size() < 200;
  for (char c : text) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '/' ||
          c == '-' || c == ':')) {
      plain = false;
    }
  }
  if (plain) {
    std::string lower = ToLower(text);
    for (const char* r : kReserved) plain = plain && lower != r;
    double number = 0;
    plain = plain && !ParseDouble(text, &number) && text.front() != '-' && text.back() != ':' &&
            !std::isdigit(static_cast<unsigned char>(text.front()));
  }
  if (plain) return std::string(text);
  std::string q = "\"";
  for (char c : text) {
    switch (c) {
      case '"': q += "\\\""; break;
      case '\\': q += "\\\\"; break;
      case '\n': q += "\\n"; break;
      case '\t': q += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) q += fmt::format("\\x{:02x}", c);
        else q += c;
    }
  }
  return q + "\"";
}

std::string HclString(std::string_view text) {
  std::string q = "\"";
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    bool template_start = (c == '$' || c == '%') && i + 1 < text.size() && text[i + 1] == '{';
    if (template_start) q += c;  // "$${" and "%%{" are literal
    switch (c) {
      case '"': q += "\\\""; break;
      case '\\': q += "\\\\"; break;
      case '\n': q += "\\n"; break;
      case '\r': q += "\\r"; break;
      case '\t': q += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) q += fmt::format("\\u{:04x}", c);
        else q += c;
    }
  }
  return q + "\"";
}

std::string CommentHeader(const ExportTarget& t) {
  std::string out = "# Generated by cloudfit export.\n";
  for (const std::string& line : t.summary) {
    std::string clean = line;
    for (char& c : clean) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    out += "# " + clean + "\n";
  }
  return out + "\n";
}

std::string ProviderMachineType(const InstanceType& type) {
  if (type.provider == "gcp") return type.name.substr(0, type.name.find('+'));
  return type.name;
}

bool GcpGpusBundled(const InstanceType& type) {
  // Accelerator-optimized families carry their GPUs in the machine type (cloud.google.com/
  // compute/docs/accelerator-optimized-machines); N1 takes them as guest accelerators.
  return StartsWith(type.name, "a2-") || StartsWith(type.name, "a3-") ||
         StartsWith(type.name, "a4-") || StartsWith(type.name, "g2-");
}

std::string GcpAcceleratorType(const InstanceType& type) {
  // GCP's accelerator type names (cloud.google.com/compute/docs/gpus), which GKE also uses as
  // the value of the cloud.google.com/gke-accelerator node label.
  if (type.gpu == nullptr) return "";
  const std::string& g = type.gpu->name;
  if (g == "H100-SXM5-80GB") {
    return StartsWith(type.name, "a3-megagpu") ? "nvidia-h100-mega-80gb" : "nvidia-h100-80gb";
  }
  static const std::pair<const char*, const char*> names[] = {
      {"T4", "nvidia-tesla-t4"},           {"P4", "nvidia-tesla-p4"},
      {"P100-PCIE-16GB", "nvidia-tesla-p100"}, {"V100-SXM2-16GB", "nvidia-tesla-v100"},
      {"A100-SXM4-40GB", "nvidia-tesla-a100"}, {"A100-SXM4-80GB", "nvidia-a100-80gb"},
      {"L4", "nvidia-l4"},                 {"H200-SXM5-141GB", "nvidia-h200-141gb"},
      {"B200", "nvidia-b200"},             {"RTX-PRO-6000-BLACKWELL", "nvidia-rtx-pro-6000"}};
  for (const auto& [name, gcp] : names) {
    if (g == name) return gcp;
  }
  return "";
}

std::string GpuFeatureDiscoveryProduct(const Accelerator& gpu) {
  // GPU feature discovery labels nodes with the driver's product name, spaces replaced by '-'
  // ("NVIDIA A100-SXM4-80GB" -> "NVIDIA-A100-SXM4-80GB"). The catalog keeps driver names among
  // the aliases; without one the canonical name stands in.
  std::string product = "NVIDIA " + gpu.name;
  for (const std::string& alias : gpu.aliases) {
    if (StartsWith(alias, "NVIDIA ") || StartsWith(alias, "Tesla ")) {
      product = alias;
      break;
    }
  }
  for (char& c : product) {
    if (c == ' ') c = '-';
  }
  return product;
}

std::string RegionName(const ExportTarget& t) { return t.region ? t.region->region : ""; }

}  // namespace export_internal

}  // namespace cloudfit

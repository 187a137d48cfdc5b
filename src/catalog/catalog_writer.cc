#include <cmath>

#include <fmt/format.h>

#include "catalog/loaders.h"
#include "cloudfit/catalog_import.h"
#include "util/csv.h"
#include "util/date.h"

namespace cloudfit {

namespace {

std::string Number(double value) { return fmt::format("{}", value); }

std::string OptionalNumber(const std::optional<double>& value) {
  return value ? Number(*value) : "";
}

}  // namespace

std::string FormatInstancesCsv(const std::vector<InstanceType>& types) {
  std::string out =
      "provider,instance_type,family,gpu_model,gpu_count,gpu_memory_gib,vcpus,memory_gib,cpu,arch,"
      "network_gbps,interconnect,local_disk_gb,local_disk_type,region,ondemand,spot,reserved_1y,reserved_3y,"
      "currency,source,as_of,notes\n";
  for (const InstanceType& t : types) {
    // GPU memory is written only where it is not simply count x the GPU's memory (slices).
    std::string gpu_memory;
    if (t.has_gpu() &&
        (!t.gpu || std::abs(t.gpu_memory_bytes - t.gpu_count * t.gpu->memory_bytes) > 1e6)) {
      gpu_memory = Number(t.gpu_memory_bytes / kBytesPerGib);
    }
    std::vector<std::string> shape = {
        t.provider, t.name, t.family, t.gpu ? t.gpu->name : "",
        t.has_gpu() ? Number(t.gpu_count) : "0", gpu_memory, std::to_string(t.vcpus),
        Number(t.memory_bytes / kBytesPerGib), t.cpu_name, t.arch,
        t.network_bits_per_s > 0 ? Number(t.network_bits_per_s / 1e9) : "",
        std::string(InterconnectName(t.interconnect)),
        Number(t.local_disk_bytes / 1e9), t.local_disk_type};
    for (const RegionPrice& r : t.regions) {
      std::vector<std::string> fields = shape;
      fields.push_back(r.region);
      for (const auto& price : r.per_hour) fields.push_back(OptionalNumber(price));
      fields.push_back(r.currency);
      fields.push_back(r.source);
      fields.push_back(r.as_of_known() ? FormatIsoDate(r.as_of_days) : "");
      fields.push_back(r.notes);
      for (size_t i = 0; i < fields.size(); ++i) {
        if (i > 0) out += ',';
        out += CsvEscape(fields[i]);
      }
      out += '\n';
    }
  }
  return out;
}

}  // namespace cloudfit

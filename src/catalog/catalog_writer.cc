#include <fmt/format.h>

#include <cmath>
#include <iterator>

#include "catalog/loaders.h"
#include "cloudfit/catalog_import.h"
#include "util/csv.h"
#include "util/date.h"

namespace cloudfit {

namespace {

void AppendNumber(double value, std::string* out) {
  fmt::format_to(std::back_inserter(*out), "{}", value);
}

std::string Number(double value) { return fmt::format("{}", value); }

// The instances file's price columns, in PricingMode order.
constexpr std::string_view kPriceColumnNames[kPricingModeCount] = {"ondemand", "spot",
                                                                   "reserved_1y", "reserved_3y"};

}  // namespace

std::string FormatInstancesCsv(const std::vector<InstanceType>& types) {
  std::string out =
      "provider,instance_type,family,gpu_model,gpu_count,gpu_memory_gib,vcpus,memory_gib,cpu,arch,"
      "network_gbps,interconnect,local_disk_gb,local_disk_type,region,ondemand,spot,reserved_1y,"
      "reserved_3y,"
      "currency,source,as_of,lowest_over_regions,notes\n";
  std::string shape;  // the fields every region row of a type repeats, written once per type
  int date_days = 0;  // the last date written, and how (imports give every row one date)
  std::string date;
  for (const InstanceType& t : types) {
    // GPU memory is written only where it is not simply count x the GPU's memory (slices).
    std::string gpu_memory;
    if (t.has_gpu() &&
        (!t.gpu || std::abs(t.gpu_memory_bytes - t.gpu_count * t.gpu->memory_bytes) > 1e6)) {
      gpu_memory = Number(t.gpu_memory_bytes / kBytesPerGib);
    }
    std::string fields[] = {t.provider,
                            t.name,
                            t.family,
                            t.gpu ? t.gpu->name : "",
                            t.has_gpu() ? Number(t.gpu_count) : "0",
                            gpu_memory,
                            std::to_string(t.vcpus),
                            Number(t.memory_bytes / kBytesPerGib),
                            t.cpu_name,
                            t.arch,
                            t.network_bits_per_s > 0 ? Number(t.network_bits_per_s / 1e9) : "",
                            std::string(InterconnectName(t.interconnect)),
                            Number(t.local_disk_bytes / 1e9),
                            t.local_disk_type};
    shape.clear();
    for (const std::string& field : fields) {
      AppendCsvField(field, &shape);
      shape += ',';
    }
    for (const RegionPrice& r : t.regions) {
      out += shape;
      AppendCsvField(r.region, &out);
      for (const auto& price : r.per_hour) {
        out += ',';
        if (price) AppendNumber(*price, &out);
      }
      out += ',';
      AppendCsvField(r.currency, &out);
      out += ',';
      AppendCsvField(r.source, &out);
      out += ',';
      if (r.as_of_known()) {
        if (r.as_of_days != date_days) date = FormatIsoDate(date_days = r.as_of_days);
        out += date;
      }
      out += ',';
      for (int i = 0, written = 0; i < kPricingModeCount; ++i) {
        if (!r.lowest_over_regions(static_cast<PricingMode>(i))) continue;
        if (written++) out += '|';
        out += kPriceColumnNames[i];
      }
      out += ',';
      AppendCsvField(r.notes, &out);
      out += '\n';
    }
  }
  return out;
}

}  // namespace cloudfit

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <unordered_map>

#include "catalog/loaders.h"
#include "util/date.h"
#include "util/strings.h"
#include "util/validate.h"

namespace cloudfit {

namespace {

constexpr std::string_view kPriceColumns[kPricingModeCount] = {"ondemand", "spot", "reserved_1y",
                                                               "reserved_3y"};
// The dearest instance anyone rents costs well under this per hour; more is a typo.
constexpr double kMaxPricePerHour = 100000;

// The columns of an instances file, found once: every row reads them.
struct InstanceColumns {
  explicit InstanceColumns(const CsvTable& t) {
    provider = t.Column("provider");
    instance_type = t.Column("instance_type");
    family = t.Column("family");
    gpu_model = t.Column("gpu_model");
    gpu_count = t.Column("gpu_count");
    gpu_memory_gib = t.Column("gpu_memory_gib");
    vcpus = t.Column("vcpus");
    memory_gib = t.Column("memory_gib");
    cpu = t.Column("cpu");
    arch = t.Column("arch");
    network_gbps = t.Column("network_gbps");
    interconnect = t.Column("interconnect");
    local_disk_gb = t.Column("local_disk_gb");
    local_disk_type = t.Column("local_disk_type");
    region = t.Column("region");
    currency = t.Column("currency");
    as_of = t.Column("as_of");
    source = t.Column("source");
    notes = t.Column("notes");
    lowest_over_regions = t.Column("lowest_over_regions");
    for (int i = 0; i < kPricingModeCount; ++i) prices[i] = t.Column(kPriceColumns[i]);
  }
  CsvColumn provider, instance_type, family, gpu_model, gpu_count, gpu_memory_gib, vcpus,
      memory_gib, cpu, arch, network_gbps, interconnect, local_disk_gb, local_disk_type, region,
      currency, as_of, source, notes, lowest_over_regions;
  CsvColumn prices[kPricingModeCount];
};

// An instance type met in a file: its first row, and the rows of its regions so far.
struct SeenType {
  size_t index = 0;  // in the output
  int line = 0;
  // Adds `region` at `line`; the line of its earlier row if it has one, else 0. Regions are
  // scanned while a type has few (as they all do: clouds have tens of regions) and hashed
  // beyond, so a file stays linear in its rows whatever it holds.
  int AddRegion(std::string_view region, int at) {
    if (many.empty()) {
      for (const auto& [name, first] : few) {
        if (name == region) return first;
      }
      few.emplace_back(region, at);
      if (few.size() > 32) many.insert(few.begin(), few.end());
      return 0;
    }
    auto [it, added] = many.try_emplace(region, at);
    return added ? 0 : it->second;
  }
  std::vector<std::pair<std::string_view, int>> few;
  std::unordered_map<std::string_view, int> many;
};

// RequiredText into a string that keeps its buffer from row to row.
void AssignRequired(CsvRowReader& r, CsvColumn column, std::string* out) {
  std::string_view text = r.Text(column);
  if (text.empty()) r.Fail(column.name, "missing value");
  out->assign(text);
}

void AssignRequired(CsvRowReader& r, CsvColumn column, SharedText* out) {
  std::string_view text = r.Text(column);
  if (text.empty()) r.Fail(column.name, "missing value");
  *out = text;
}

// A name column: required, and within the limits of every name (util/validate.h).
void AssignName(CsvRowReader& r, CsvColumn column, std::string* out) {
  AssignRequired(r, column, out);
  if (!r.status().ok()) return;
  if (Status s = CheckName("", *out); !s.ok()) r.Fail(column.name, s.message());
}

// The same number to the bit, as the same digits would print it (0 and -0 differ).
bool Same(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Whether two rows of one instance type give the same shape: the figures that must agree on
// every region row.
bool SameShape(const InstanceType& a, const InstanceType& b) {
  return a.family == b.family && a.gpu == b.gpu && Same(a.gpu_count, b.gpu_count) &&
         Same(a.gpu_memory_bytes, b.gpu_memory_bytes) && a.vcpus == b.vcpus &&
         Same(a.memory_bytes, b.memory_bytes) && a.cpu_name == b.cpu_name && a.arch == b.arch &&
         Same(a.network_bits_per_s, b.network_bits_per_s) && a.interconnect == b.interconnect &&
         Same(a.local_disk_bytes, b.local_disk_bytes) && a.local_disk_type == b.local_disk_type;
}

}  // namespace

std::string_view PricingModeName(PricingMode mode) {
  static constexpr std::string_view kNames[kPricingModeCount] = {"ondemand", "spot", "reserved-1y",
                                                                 "reserved-3y"};
  return kNames[static_cast<int>(mode)];
}

std::string_view PriceScopeName(const RegionPrice& price, PricingMode mode) {
  return price.lowest_over_regions(mode) ? "lowest_over_regions" : "region";
}

bool ParsePricingMode(std::string_view name, PricingMode* out) {
  std::string key = NormalizeName(name);
  if (key == "ondemand" || key == "od")
    *out = PricingMode::kOnDemand;
  else if (key == "spot" || key == "preemptible")
    *out = PricingMode::kSpot;
  else if (key == "reserved1y" || key == "1y")
    *out = PricingMode::kReserved1y;
  else if (key == "reserved3y" || key == "3y")
    *out = PricingMode::kReserved3y;
  else
    return false;
  return true;
}

std::string_view InterconnectName(Interconnect interconnect) {
  switch (interconnect) {
    case Interconnect::kUnknown:
      return "";
    case Interconnect::kEthernet:
      return "ethernet";
    case Interconnect::kEfa:
      return "efa";
    case Interconnect::kInfiniband:
      return "infiniband";
    case Interconnect::kRoce:
      return "roce";
    case Interconnect::kGpuDirectTcpx:
      return "gpudirect-tcpx";
  }
  return "";
}

bool ParseInterconnect(std::string_view name, Interconnect* out) {
  std::string key = NormalizeName(name);
  if (key.empty())
    *out = Interconnect::kUnknown;
  else if (key == "ethernet" || key == "tcp")
    *out = Interconnect::kEthernet;
  else if (key == "efa")
    *out = Interconnect::kEfa;
  else if (key == "infiniband" || key == "ib")
    *out = Interconnect::kInfiniband;
  else if (key == "roce")
    *out = Interconnect::kRoce;
  else if (key == "gpudirecttcpx" || key == "tcpx" || key == "gpudirecttcpxo") {
    *out = Interconnect::kGpuDirectTcpx;
  } else {
    return false;
  }
  return true;
}

bool RegionPrice::any_price() const {
  for (const auto& p : per_hour) {
    if (p) return true;
  }
  return false;
}

const RegionPrice* InstanceType::FindRegion(std::string_view region) const {
  for (const RegionPrice& r : regions) {
    if (r.region == region) return &r;
  }
  return nullptr;
}

Status ParseInstances(const CsvTable& table, const std::string& provider, const Catalog& catalog,
                      std::vector<InstanceType>* out) {
  Status s = table.RequireColumns({"provider", "instance_type", "family", "gpu_model", "gpu_count",
                                   "vcpus", "memory_gib", "region", "ondemand", "spot",
                                   "reserved_1y", "reserved_3y", "currency", "source", "as_of"});
  if (!s.ok()) return s;

  const InstanceColumns col(table);
  // Each type's first row and the lines of its regions so far, keyed by views of the table's
  // text (which outlives the loop).
  std::unordered_map<std::string_view, SeenType> types;
  // Names resolved once per file: every region row of a type repeats them.
  std::unordered_map<std::string, std::pair<Status, const Accelerator*>, StringHash,
                     std::equal_to<>>
      gpus;
  std::unordered_map<std::string, const CpuGeneration*, StringHash, std::equal_to<>> cpus;
  // One row at a time, reused: their strings keep their buffers, and only a new type or a new
  // offer is copied into `out`. What a row does not always set is reset first.
  InstanceType t;
  RegionPrice price;
  for (const CsvRow& row : table.rows) {
    CsvRowReader r(table, row);
    t.gpu = nullptr;
    t.gpu_memory_bytes = 0;
    t.cpu = nullptr;
    t.interconnect = Interconnect::kUnknown;
    price.per_hour = {};
    price.as_of_days = 0;
    price.lowest_over_regions_modes = 0;
    AssignRequired(r, col.provider, &t.provider);
    if (r.status().ok() && t.provider != provider) {
      r.Fail("provider",
             fmt::format("'{}' in the file for provider '{}'", Shown(t.provider), provider));
    }
    AssignName(r, col.instance_type, &t.name);
    AssignName(r, col.family, &t.family);
    std::string_view gpu_model = r.Text(col.gpu_model);
    std::optional<double> gpu_count = r.OptionalNumber(col.gpu_count, 0, 1024);
    if (!gpu_model.empty() && r.status().ok()) {
      auto it = gpus.find(gpu_model);
      if (it == gpus.end()) {
        const Accelerator* gpu = nullptr;
        Status found = catalog.FindAccelerator(gpu_model, &gpu);
        it = gpus.emplace(std::string(gpu_model), std::make_pair(found, gpu)).first;
      }
      t.gpu = it->second.second;
      if (!it->second.first.ok()) r.Fail("gpu_model", it->second.first.message());
      if (!gpu_count || *gpu_count <= 0) {
        r.Fail("gpu_count", "an instance with a GPU model needs a GPU count above 0");
      }
    }
    t.gpu_count = gpu_count.value_or(0);
    if (auto gib = r.OptionalNumber(col.gpu_memory_gib, 0.001, 1e6)) {
      t.gpu_memory_bytes = *gib * kBytesPerGib;
    } else if (t.gpu) {
      t.gpu_memory_bytes = t.gpu_count * t.gpu->memory_bytes;
    } else if (t.gpu_count > 0) {
      // Some providers mask the GPU model ("GPU H"); its memory must then be given.
      r.Fail("gpu_memory_gib", "a GPU count without a GPU model needs the GPU memory");
    }
    double vcpus = r.Number(col.vcpus, 1, 8192);
    if (r.status().ok() && vcpus != std::floor(vcpus)) r.Fail("vcpus", "not a whole number");
    t.vcpus = static_cast<int>(vcpus);
    t.memory_bytes = r.Number(col.memory_gib, 0.1, 1e6) * kBytesPerGib;
    t.cpu_name = r.Text(col.cpu);
    if (!t.cpu_name.empty()) {
      auto it = cpus.find(t.cpu_name);
      if (it == cpus.end()) it = cpus.emplace(t.cpu_name, catalog.FindCpu(t.cpu_name)).first;
      t.cpu = it->second;
    }
    t.arch = r.Text(col.arch);
    if (t.arch.empty()) t.arch = t.cpu ? t.cpu->arch : "x86_64";
    if (r.status().ok() && t.arch != "x86_64" && t.arch != "arm64") {
      r.Fail("arch", fmt::format("'{}' is not x86_64 or arm64", Shown(t.arch)));
    }
    t.network_bits_per_s = r.OptionalNumber(col.network_gbps, 0, 1e5).value_or(0) * 1e9;
    if (std::string_view fabric = r.Text(col.interconnect);
        !ParseInterconnect(fabric, &t.interconnect)) {
      r.Fail("interconnect", fmt::format("'{}' is not one of ethernet, efa, infiniband, roce, "
                                         "gpudirect-tcpx (or empty when unknown)",
                                         Shown(fabric)));
    }
    t.local_disk_bytes = r.OptionalNumber(col.local_disk_gb, 0, 1e7).value_or(0) * 1e9;
    t.local_disk_type = r.Text(col.local_disk_type);

    AssignName(r, col.region, &price.region);
    for (int i = 0; i < kPricingModeCount; ++i) {
      std::string_view text = r.Text(col.prices[i]);
      if (text.empty()) continue;
      price.per_hour[i] = r.OptionalNumber(col.prices[i], -1e300, kMaxPricePerHour);
      if (price.per_hour[i] && *price.per_hour[i] <= 0) {
        r.Fail(kPriceColumns[i], fmt::format("{} is not a price; a price must be above 0, and an "
                                             "unknown price is left empty",
                                             Shown(text)));
      }
    }
    // A row without any price needs no currency; a priced row must say which it is.
    if (price.any_price())
      AssignRequired(r, col.currency, &price.currency);
    else
      price.currency = r.Text(col.currency);
    const CurrencyRate* rate =
        price.currency.empty() ? nullptr : catalog.FindCurrency(price.currency);
    if (r.status().ok() && !price.currency.empty() && rate == nullptr) {
      r.Fail("currency", fmt::format("'{}' has no rate in currency.csv", Shown(price.currency)));
    }
    // A price must also be plausible for its currency: 1e-300 is not "known and free".
    for (int i = 0; i < kPricingModeCount && rate != nullptr && r.status().ok(); ++i) {
      if (!price.per_hour[i]) continue;
      Status plausible =
          CheckPricePerHour("", *price.per_hour[i], rate->currency, rate->usd_per_unit);
      if (!plausible.ok()) r.Fail(kPriceColumns[i], plausible.message());
    }
    // Empty (or "unknown") where the source gives no date: never the day the file was read.
    std::string_view as_of = r.Text(col.as_of);
    if (r.status().ok() && !as_of.empty() && !EqualsIgnoringCase(as_of, "unknown") &&
        !ParseIsoDate(as_of, &price.as_of_days)) {
      r.Fail("as_of", fmt::format("'{}' is not a YYYY-MM-DD date (leave it empty when unknown)",
                                  Shown(as_of)));
    }
    AssignRequired(r, col.source, &price.source);
    price.notes = r.Text(col.notes);
    // Which prices are the type's minimum over all regions rather than this region's quote: a
    // marker the recommendation turns into a warning, so it must name priced columns exactly.
    for (const std::string& name : SplitList(r.Text(col.lowest_over_regions), '|')) {
      int mode = 0;
      while (mode < kPricingModeCount && name != kPriceColumns[mode]) ++mode;
      if (mode == kPricingModeCount) {
        r.Fail("lowest_over_regions",
               fmt::format("'{}' is not a price column (ondemand, spot, reserved_1y, "
                           "reserved_3y; several separated by |)",
                           name));
      } else if (!price.per_hour[mode]) {
        r.Fail("lowest_over_regions",
               fmt::format("names {}, which has no price on this row", name));
      } else {
        price.lowest_over_regions_modes |= 1u << mode;
      }
    }
    if (!r.status().ok()) return r.status();

    auto [it, new_type] = types.try_emplace(r.Text(col.instance_type));
    SeenType& seen = it->second;
    if (int first = seen.AddRegion(r.Text(col.region), row.line)) {
      r.Fail("region", fmt::format("duplicate row for {} in {} (first at line {})", Shown(t.name),
                                   Shown(price.region), first));
      return r.status();
    }
    if (new_type) {
      seen.index = out->size();
      seen.line = row.line;
      InstanceType& added = out->emplace_back(t);
      added.source = fmt::format("{}:{}", table.path, row.line);
      // The first URL of `source` documents the shape; the price page may differ per region.
      std::vector<std::string> sources = SplitList(price.source, '|');
      added.shape_source = sources.empty() ? "" : sources.front();
      added.regions.push_back(price);
    } else {
      if (!SameShape((*out)[seen.index], t)) {
        r.Fail("instance_type", fmt::format("the shape of {} differs from its row at line {}; "
                                            "every region row of a type must agree",
                                            Shown(t.name), seen.line));
        return r.status();
      }
      (*out)[seen.index].regions.push_back(std::move(price));
    }
  }
  return Status::OK();
}

}  // namespace cloudfit

// Reads SkyPilot's catalog CSVs (github.com/skypilot-org/skypilot-catalog, schema v8/v9). Their
// columns differ per cloud, so fields are found by header name. Rows are one per (type, region)
// or per (type, zone); zones of one region merge into one offer with the lowest spot price.
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <regex>
#include <unordered_map>

#include "catalog/import_merge.h"
#include "catalog/loaders.h"
#include "cloudfit/catalog_import.h"
#include "util/csv.h"
#include "util/date.h"
#include "util/file.h"
#include "util/python_literal.h"
#include "util/strings.h"
#include "util/validate.h"

namespace cloudfit {

namespace {

// GCP bills the GPUs of these machine families apart from the host; SkyPilot's rows for them
// carry the host price only and the GPU price sits in a separate "attachable" row.
struct GcpBundledGpu {
  const char* prefix;
  const char* accelerator;  // SkyPilot's accelerator name
};
constexpr GcpBundledGpu kGcpBundled[] = {{"a2-highgpu-", "A100"},       {"a2-megagpu-", "A100"},
                                         {"a2-ultragpu-", "A100-80GB"}, {"a3-highgpu-", "H100"},
                                         {"a3-megagpu-", "H100-MEGA"},  {"a3-edgegpu-", "H100"},
                                         {"a3-ultragpu-", "H200"},      {"g2-standard-", "L4"}};

// Accelerators in SkyPilot's catalogs that are not GPUs; cloudfit models GPUs and CPUs only.
bool IsNonGpuAccelerator(std::string_view name) {
  std::string key = NormalizeName(name);
  for (const char* prefix : {"tpu", "inferentia", "trainium", "gaudi", "hl205", "radeonmi25"}) {
    if (StartsWith(key, prefix)) return true;
  }
  return false;
}

// GPUs per GCP machine: "a2-highgpu-4g" -> 4; g2-standard sizes per GCP's G2 documentation.
double GcpBundledGpuCount(const std::string& type, double vcpus) {
  // "-<digits>g" at the end, scanned by hand (std::regex recursed once per digit).
  if (EndsWith(type, "g")) {
    size_t end = type.size() - 1, start = end;
    while (start > 0 && type[start - 1] >= '0' && type[start - 1] <= '9') --start;
    double count = 0;
    if (start < end && start > 0 && type[start - 1] == '-' &&
        ParseDouble(std::string_view(type).substr(start, end - start), &count)) {
      return count <= 1024 ? count : 0;
    }
  }
  if (StartsWith(type, "g2-standard-")) {
    if (vcpus >= 96) return 8;
    if (vcpus >= 48) return 4;
    if (vcpus == 24) return 2;
    return 1;
  }
  return 0;
}

// A canonical GPU name without its form factor and memory words: "a100" of "A100-SXM4-80GB",
// "h100" of "H100-NVL-94GB", "rtx-4090" of "RTX-4090". Variants of one GPU share it.
std::string GpuFamily(const std::string& canonical) {
  static const std::regex kVariantWord(R"(sxm\d*|pcie|nvl|\d+gb)");
  std::vector<std::string> kept;
  for (const std::string& word : SplitList(ToLower(canonical), '-')) {
    if (!std::regex_match(word, kVariantWord)) kept.push_back(word);
  }
  return Join(kept, "-");
}

// The form factor an instance type's name states: "gpu_1x_a100_sxm4" -> SXM,
// "gpu_1x_h100_pcie" -> PCIe, "...h100nvl..." -> NVL; "" when it states none.
std::string FormFactorInName(const std::string& type) {
  std::string key = ToLower(type);
  if (key.find("sxm") != std::string::npos) return "sxm";
  if (key.find("pcie") != std::string::npos) return "pcie";
  if (key.find("nvl") != std::string::npos) return "nvl";
  return "";
}

bool FormFactorMatches(const Accelerator& gpu, const std::string& wanted) {
  if (wanted.empty()) return true;
  std::string have = ToLower(gpu.form_factor + " " + gpu.name);
  return have.find(wanted) != std::string::npos;
}

// The catalog's GPU for a file's accelerator name, its per-GPU memory (0 when the file gives
// none) and the instance type's name: the name picks the GPU family; memory (within 10%) and
// the form factor the type's name states pick the variant. When several variants remain and
// nothing tells them apart, the name's own match is taken and `guess` says so.
// `families` holds GpuFamily of each of the catalog's accelerators, in order.
const Accelerator* ResolveGpu(const Catalog& catalog, const std::vector<std::string>& families,
                              const std::string& name, double per_gpu_bytes,
                              const std::string& type, std::string* guess) {
  const Accelerator* named = nullptr;
  if (!catalog.FindAccelerator(name, &named).ok()) return nullptr;
  const std::vector<Accelerator>& all = catalog.accelerators();
  const std::string& family = families[static_cast<size_t>(named - all.data())];
  std::string form = FormFactorInName(type);
  std::vector<const Accelerator*> variants;
  for (size_t i = 0; i < all.size(); ++i) {
    if (families[i] == family && all[i].vendor == named->vendor) variants.push_back(&all[i]);
  }
  auto memory_fits = [&](const Accelerator* a) {
    return per_gpu_bytes <= 0 || std::abs(a->memory_bytes - per_gpu_bytes) <= 0.1 * a->memory_bytes;
  };
  std::vector<const Accelerator*> fitting;
  for (const Accelerator* a : variants) {
    if (memory_fits(a) && FormFactorMatches(*a, form)) fitting.push_back(a);
  }
  if (fitting.empty()) {
    // Nothing fits both: memory outranks the name's form factor hint, the name outranks both.
    for (const Accelerator* a : variants) {
      if (memory_fits(a)) fitting.push_back(a);
    }
    if (fitting.empty()) fitting.push_back(named);
    *guess = fmt::format(
        "'{}' on {}: no variant of {} has {:.0f} GiB and a {} form factor; "
        "took {}",
        Shown(name), Shown(type), named->name, per_gpu_bytes / kBytesPerGib,
        form.empty() ? "matching" : form, fitting.front()->name);
    return fitting.front();
  }
  // The name's own match when it fits; otherwise the one variant that does.
  const Accelerator* chosen =
      std::find(fitting.begin(), fitting.end(), named) != fitting.end() ? named : fitting.front();
  if (fitting.size() > 1) {
    std::vector<std::string> others;
    for (const Accelerator* a : fitting) {
      if (a != chosen) others.push_back(a->name);
    }
    *guess = fmt::format(
        "'{}' on {}: {} (could also be {}: the row gives {} and the type's name "
        "no form factor)",
        Shown(name), Shown(type), chosen->name, Join(others, ", "),
        per_gpu_bytes > 0 ? "one memory size for all" : "no GPU memory");
  }
  return chosen;
}

std::string FamilyOf(const std::string& cloud, const std::string& type, const Accelerator* gpu) {
  size_t dot = type.find('.');
  if (dot != std::string::npos) return type.substr(0, dot);
  if (cloud == "gcp") return type.substr(0, type.find('-'));
  return gpu ? gpu->name : "cpu";
}

int FileDateDays(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return TodayDays();
  return static_cast<int>(st.st_mtime / 86400);
}

std::string CloudOfPath(const std::string& path) {
  return ToLower(std::filesystem::path(path).parent_path().filename().string());
}

struct Offer {
  std::optional<double> ondemand;
  std::optional<double> spot;
  int zones = 0;
};

struct AttachablePrice {
  double price = 0;
  std::optional<double> spot;
};

class SkyPilotFile {
 public:
  SkyPilotFile(const Catalog& catalog, std::string cloud, int as_of_days, std::string path,
               FileImportReport* report)
      : catalog_(catalog),
        cloud_(std::move(cloud)),
        as_of_days_(as_of_days),
        path_(std::move(path)),
        report_(report) {}

  // `text` must outlive this object: the table views it.
  Status Read(std::string_view text) {
    CsvOptions options;
    options.allow_comments = false;
    options.borrow_text = true;
    Status s = ParseCsv(text, path_, options, &table_);
    if (!s.ok()) return s;
    s = table_.RequireColumns({"InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs",
                               "MemoryGiB", "Price", "SpotPrice", "Region"});
    if (!s.ok()) return s;
    columns_.emplace(table_);
    CollectAttachablePrices();
    for (const CsvRow& row : table_.rows) ReadRow(row);
    int unused = 0;
    for (const auto& [key, count] : attachable_unused_) unused += count;
    if (unused > 0) {
      report_->skipped
          ["GCP attachable GPU row not bundled with a host (N1 + GPU combinations "
           "are not generated)"] += unused;
    }
    report_->rows_used += attachable_rows_ - unused;  // their prices went into host rows
    return Status::OK();
  }

  // Merges what was read into `working`.
  void MergeInto(WorkingCatalog* working, ImportReport* totals) {
    std::string source = "SkyPilot catalog " + path_;
    // In name order, so that added types come in the same order whatever the file's.
    std::vector<std::pair<const std::string, ImportedType>*> sorted;
    sorted.reserve(types_.size());
    for (auto& entry : types_) sorted.push_back(&entry);
    std::sort(sorted.begin(), sorted.end(),
              [](const auto* a, const auto* b) { return a->first < b->first; });
    for (auto* entry : sorted) {
      const std::string& name = entry->first;
      ImportedType& imported = entry->second;
      InstanceType* existing = working->Find(cloud_, name);
      if (existing == nullptr) {
        ++totals->types_added;
        existing = working->Add(imported.shape);
      } else {
        ++totals->types_updated;
      }
      for (const auto& [region, offer] : imported.offers) {
        RegionPrice* price = nullptr;
        for (RegionPrice& r : existing->regions) {
          if (r.region == region) price = &r;
        }
        if (price == nullptr) {
          existing->regions.push_back(RegionPrice{});
          price = &existing->regions.back();
          price->region = region;
          ++totals->offers_added;
        } else {
          ++totals->offers_updated;
        }
        // SkyPilot's prices are per region: they replace any cross-region minimum.
        price->per_hour[static_cast<int>(PricingMode::kOnDemand)] = offer.ondemand;
        price->MarkRegional(PricingMode::kOnDemand);
        if (offer.spot) {
          price->per_hour[static_cast<int>(PricingMode::kSpot)] = offer.spot;
          price->MarkRegional(PricingMode::kSpot);
        }
        price->currency = "USD";
        price->as_of_days = as_of_days_;
        price->source = source;
        price->notes = offer.zones > 1
                           ? fmt::format("imported; spot = lowest of {} zones", offer.zones)
                           : "imported";
      }
    }
  }

 private:
  struct ImportedType {
    InstanceType shape;
    std::map<std::string, Offer> offers;  // by region
  };

  // The same number to the bit, as the same digits would print it.
  static bool Same(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

  // Whether two rows of a type describe one shape. GpuInfo is missing on some rows of a type;
  // GPU memory is not part of the comparison.
  static bool SameShape(const InstanceType& a, const InstanceType& b) {
    return a.gpu == b.gpu && Same(a.gpu_count, b.gpu_count) && a.vcpus == b.vcpus &&
           Same(a.memory_bytes, b.memory_bytes) && a.arch == b.arch &&
           Same(a.local_disk_bytes, b.local_disk_bytes) && a.local_disk_type == b.local_disk_type;
  }

  // SkyPilot's own per-GPU memory from a row's GpuInfo (AWS reports usable MiB), 0 when it
  // gives none. Walked with checks at every step: a field of another type is ignored, not
  // thrown at. Every row of a type repeats the literal, so each is parsed once.
  double PerGpuBytes(std::string_view gpu_info) {
    if (!StartsWith(gpu_info, "{")) return 0;
    if (auto known = per_gpu_bytes_.find(gpu_info); known != per_gpu_bytes_.end()) {
      return known->second;
    }
    auto it = per_gpu_bytes_.emplace(std::string(gpu_info), 0.0).first;
    nlohmann::json info;
    if (!ParsePythonLiteral(gpu_info, &info).ok()) return 0;
    double mib = 0;
    auto gpus = info.is_object() ? info.find("Gpus") : info.end();
    if (gpus != info.end() && gpus->is_array() && !gpus->empty() && (*gpus)[0].is_object()) {
      const nlohmann::json& first = (*gpus)[0];
      auto memory = first.find("MemoryInfo");
      if (memory != first.end() && memory->is_object()) {
        auto size = memory->find("SizeInMiB");
        if (size != memory->end() && size->is_number()) mib = size->get<double>();
      }
    }
    // Up to 16 TiB per GPU: far above any GPU, far below a value that breaks arithmetic.
    if (mib > 0 && mib <= 16.0 * 1024 * 1024) it->second = mib * 1024 * 1024;
    return it->second;
  }

  struct ResolvedGpu {
    bool non_gpu = false;  // TPUs and other accelerators cloudfit does not model
    const Accelerator* gpu = nullptr;
    std::string guess;
    const InstanceType* known = nullptr;  // the catalog's type of that name
  };
  // What a GPU row's accelerator name, memory and type resolve to, once per distinct three
  // (every row of a type repeats them).
  const ResolvedGpu& Resolve(const std::string& accelerator, double per_gpu_bytes,
                             const std::string& type) {
    std::string key = accelerator + '\0' + type + '\0' +
                      std::string(reinterpret_cast<const char*>(&per_gpu_bytes), sizeof(double));
    auto [it, inserted] = resolved_.try_emplace(std::move(key));
    ResolvedGpu& r = it->second;
    if (inserted) {
      r.non_gpu = IsNonGpuAccelerator(accelerator);
      if (families_.empty()) {
        for (const Accelerator& a : catalog_.accelerators()) families_.push_back(GpuFamily(a.name));
      }
      if (!r.non_gpu) {
        r.gpu = ResolveGpu(catalog_, families_, accelerator, per_gpu_bytes, type, &r.guess);
      }
      r.known = catalog_.LookupInstance(type);
    }
    return r;
  }

  // The columns the importer reads, found once per file (-1: the file has none).
  struct Columns {
    explicit Columns(const CsvTable& t)
        : type(t.ColumnIndex("InstanceType")),
          accelerator(t.ColumnIndex("AcceleratorName")),
          count(t.ColumnIndex("AcceleratorCount")),
          vcpus(t.ColumnIndex("vCPUs")),
          memory(t.ColumnIndex("MemoryGiB")),
          gpu_info(t.ColumnIndex("GpuInfo")),
          price(t.ColumnIndex("Price")),
          spot(t.ColumnIndex("SpotPrice")),
          region(t.ColumnIndex("Region")),
          zone(t.ColumnIndex("AvailabilityZone")),
          arch(t.ColumnIndex("Arch")),
          disk_type(t.ColumnIndex("LocalDiskType")),
          disk_size(t.ColumnIndex("LocalDiskSize")),
          disk_count(t.ColumnIndex("LocalDiskCount")) {}
    int type, accelerator, count, vcpus, memory, gpu_info, price, spot, region, zone, arch,
        disk_type, disk_size, disk_count;
  };

  static std::string_view Field(const CsvRow& row, int index) {
    return index < 0 ? std::string_view() : Trim(row.fields[static_cast<size_t>(index)]);
  }

  static std::optional<double> Number(const CsvRow& row, int column) {
    double value = 0;
    if (!ParseDouble(Field(row, column), &value)) return std::nullopt;
    return value;
  }

  void Skip(const std::string& reason) { ++report_->skipped[reason]; }

  void CollectAttachablePrices() {
    if (cloud_ != "gcp") return;
    for (const CsvRow& row : table_.rows) {
      std::string_view accelerator = Field(row, columns_->accelerator);
      if (!Field(row, columns_->type).empty() || accelerator.empty() ||
          IsNonGpuAccelerator(accelerator)) {
        continue;
      }
      auto price = Number(row, columns_->price);
      if (!price || *price <= 0 || *price == 700.0) {
        Skip("GCP attachable GPU row without a usable price");
        continue;
      }
      std::string key =
          fmt::format("{}|{}|{}", accelerator, Number(row, columns_->count).value_or(1),
                      Field(row, columns_->zone));
      auto spot = Number(row, columns_->spot);
      attachable_[key] = AttachablePrice{*price, spot && *spot > 0 ? spot : std::nullopt};
      ++attachable_unused_[key];
      ++attachable_rows_;
    }
  }

  void ReadRow(const CsvRow& row) {
    ++report_->rows_read;
    std::string type(Field(row, columns_->type));
    std::string accelerator(Field(row, columns_->accelerator));
    std::string region(Field(row, columns_->region));
    if (type.empty()) {
      if (IsNonGpuAccelerator(accelerator))
        Skip("not a GPU (" + Shown(accelerator) + ")");
      else if (cloud_ != "gcp")
        Skip("row without an instance type");
      return;  // GCP attachable GPU rows are counted when used or at the end
    }
    if (region.empty()) return Skip("missing region");
    if (!CheckName("", type).ok() || !CheckName("", region).ok() ||
        (!accelerator.empty() && !CheckName("", accelerator).ok())) {
      return Skip(
          fmt::format("instance type, region or accelerator name not UTF-8 text of at "
                      "most {} bytes",
                      kMaxNameBytes));
    }
    auto price = Number(row, columns_->price);
    if (!price) return Skip("missing or non-numeric price");
    if (cloud_ == "gcp" && *price == 700.0) return Skip("placeholder price 700.0 (not offered)");
    if (*price <= 0) return Skip("price not above 0");
    if (!CheckPricePerHour("", *price, "USD", 1).ok()) {
      return Skip(fmt::format("implausible price (outside US${} to US${} per hour)", kMinUsdPerHour,
                              kMaxUsdPerHour));
    }
    // 0 stands for "no spot price" below: marketplaces write 0.00 for it.
    double spot = std::max(0.0, Number(row, columns_->spot).value_or(0));
    if (spot > 0 && !CheckPricePerHour("", spot, "USD", 1).ok()) spot = 0;
    auto vcpus = Number(row, columns_->vcpus);
    auto memory_gib = Number(row, columns_->memory);
    if (!vcpus || *vcpus < 1 || *vcpus > 8192 || *vcpus != std::floor(*vcpus) || !memory_gib ||
        *memory_gib <= 0 || *memory_gib > 1e6) {
      return Skip("missing or bad vCPUs or MemoryGiB");
    }
    double gpu_count = Number(row, columns_->count).value_or(0);

    // GCP a2/a3/g2 rows: add the attached GPUs' price for the same zone.
    if (cloud_ == "gcp" && accelerator.empty()) {
      for (const GcpBundledGpu& bundled : kGcpBundled) {
        if (!StartsWith(type, bundled.prefix)) continue;
        accelerator = bundled.accelerator;
        gpu_count = GcpBundledGpuCount(type, *vcpus);
        std::string zone(Field(row, columns_->zone));
        std::string key = fmt::format("{}|{}|{}", accelerator, gpu_count, zone);
        auto it = attachable_.find(key);
        double multiplier = 1;
        if (it == attachable_.end()) {
          key = fmt::format("{}|1|{}", accelerator, zone);
          it = attachable_.find(key);
          multiplier = gpu_count;
        }
        if (it == attachable_.end()) {
          return Skip(fmt::format(
              "GCP host-only price: the attached {} price for its zone is not in the file",
              Shown(accelerator)));
        }
        attachable_unused_.erase(key);
        *price += it->second.price * multiplier;
        if (spot > 0) spot = it->second.spot ? spot + *it->second.spot * multiplier : 0;
        break;
      }
    }

    InstanceType shape;
    double per_gpu_bytes = 0;  // SkyPilot's own per-GPU figure, when it gives one
    if (!accelerator.empty()) {
      per_gpu_bytes = PerGpuBytes(Field(row, columns_->gpu_info));
      const ResolvedGpu& resolved = Resolve(accelerator, per_gpu_bytes, type);
      if (resolved.non_gpu) return Skip("not a GPU (" + Shown(accelerator) + ")");
      shape.gpu = resolved.gpu;
      const std::string& guess = resolved.guess;
      if (shape.gpu == nullptr) return Skip("unknown GPU '" + Shown(accelerator) + "'");
      if (gpu_count <= 0 || gpu_count > 1024) return Skip("GPU without a count of 1 to 1024");
      // A type the catalog already describes keeps its curated GPU; say where the file differs.
      const InstanceType* known = resolved.known;
      if (known != nullptr && known->provider == cloud_ && known->gpu) {
        if (known->gpu != shape.gpu) {
          ++report_->guessed[fmt::format(
              "'{}' on {}: the file suggests {}, the catalog says {}; "
              "kept the catalog's",
              Shown(accelerator), Shown(type), shape.gpu->name, known->gpu->name)];
        }
        shape.gpu = known->gpu;
      } else if (!guess.empty()) {
        ++report_->guessed[guess];
      }
    }
    shape.gpu_count = shape.gpu ? gpu_count : 0;
    shape.vcpus = static_cast<int>(*vcpus);
    shape.memory_bytes = *memory_gib * kBytesPerGib;
    shape.arch = Field(row, columns_->arch) == "arm64" ? "arm64" : "x86_64";
    if (auto disk = Number(row, columns_->disk_size); disk && *disk > 0 && *disk <= 1e7) {
      double count = Number(row, columns_->disk_count).value_or(1);
      shape.local_disk_bytes = *disk * (count >= 1 && count <= 1024 ? count : 1) * 1e9;
      shape.local_disk_type = ToLower(Field(row, columns_->disk_type));
    }
    auto [it, inserted] = types_.try_emplace(type);
    ImportedType& imported = it->second;
    if (inserted) {
      // What the first row of a type says, beyond the figures every row must repeat.
      shape.provider = cloud_;
      shape.name = type;
      shape.family = FamilyOf(cloud_, type, shape.gpu);
      if (shape.gpu) {
        // SkyPilot's per-GPU figure where it gives one (AWS reports usable MiB).
        shape.gpu_memory_bytes =
            shape.gpu_count * (per_gpu_bytes > 0 ? per_gpu_bytes : shape.gpu->memory_bytes);
      }
      imported.shape = std::move(shape);
    } else if (!SameShape(imported.shape, shape)) {
      return Skip("shape differs from an earlier row of the same type");
    }
    Offer& offer = imported.offers[region];
    if (offer.zones > 0) {
      if (merged_rows_ == nullptr) {
        merged_rows_ = &report_->merged["rows merged into one offer per region (zones, repeats)"];
      }
      ++*merged_rows_;
    }
    ++offer.zones;
    offer.ondemand = offer.ondemand ? std::min(*offer.ondemand, *price) : *price;
    if (spot > 0) offer.spot = offer.spot ? std::min(*offer.spot, spot) : spot;
    ++report_->rows_used;
  }

  const Catalog& catalog_;
  std::string cloud_;
  int as_of_days_;
  std::string path_;
  FileImportReport* report_;
  CsvTable table_;
  std::optional<Columns> columns_;
  // By GpuInfo literal, found without making a string of its 250 bytes per row.
  std::unordered_map<std::string, double, StringHash, std::equal_to<>> per_gpu_bytes_;
  std::unordered_map<std::string, ResolvedGpu> resolved_;
  std::vector<std::string> families_;  // GpuFamily of each catalog accelerator
  int* merged_rows_ = nullptr;         // the report's count of merged rows, once there is one
  std::map<std::string, AttachablePrice> attachable_;
  std::map<std::string, int> attachable_unused_;
  int attachable_rows_ = 0;
  std::unordered_map<std::string, ImportedType> types_;
};

}  // namespace

const std::vector<std::string>& SkyPilotClouds() {
  static const std::vector<std::string> clouds = {
      "aws", "gcp",        "azure", "lambda", "nebius", "seeweb",     "vast",
      "ibm", "fluidstack", "cudo",  "oci",    "runpod", "paperspace", "do"};
  return clouds;
}

Status ImportSkyPilot(const Catalog& base, const std::vector<std::string>& paths,
                      const SkyPilotImportOptions& options, CatalogFiles* out,
                      ImportReport* report) {
  if (paths.empty()) return Status::InvalidArgument("FILE: give at least one SkyPilot CSV file");
  int fixed_as_of = 0;
  if (!options.as_of.empty() && !ParseIsoDate(options.as_of, &fixed_as_of)) {
    return Status::InvalidArgument(
        fmt::format("--as-of: '{}' is not a YYYY-MM-DD date", Shown(options.as_of)));
  }
  WorkingCatalog working(base);
  for (const std::string& path : paths) {
    std::string cloud = ToLower(options.cloud.empty() ? CloudOfPath(path) : options.cloud);
    const auto& clouds = SkyPilotClouds();
    if (std::find(clouds.begin(), clouds.end(), cloud) == clouds.end()) {
      return Status::InvalidArgument(
          fmt::format("--cloud: cannot tell the cloud of {} ('{}' is not one of {}); pass --cloud",
                      path, Shown(cloud), Join(clouds, ", ")));
    }
    std::string text;
    Status s = ReadFile(path, &text);
    if (!s.ok()) return s;
    FileImportReport file_report;
    file_report.path = path;
    file_report.provider = cloud;
    SkyPilotFile file(base, cloud, fixed_as_of ? fixed_as_of : FileDateDays(path), path,
                      &file_report);
    s = file.Read(text);
    if (!s.ok()) return s;
    file.MergeInto(&working, report);
    report->files.push_back(std::move(file_report));
  }
  return working.Finish(out);
}

}  // namespace cloudfit

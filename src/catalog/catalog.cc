#include "cloudfit/catalog.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "catalog/catalog_builder.h"
#include "catalog/embedded_data.h"
#include "catalog/loaders.h"
#include "util/file.h"
#include "util/strings.h"
#include "util/validate.h"

namespace cloudfit {

namespace {

constexpr const char* kInstancesDir = "instances/";

// A name too long to be one: refused before any lookup, so its length costs nothing (edit
// distances for suggestions grow with the square of it).
Status TooLong(std::string_view what, std::string_view name) {
  return Status::NotFound(
      fmt::format("unknown {} '{}': names are at most {} bytes", what, Shown(name), kMaxNameBytes));
}

// Splits a normalized name ending in a memory size ("a10080gb", "rtx309024g") into the part
// before the digits and the GiB, as the pattern ^(.*[a-z].*?)(\d+)g(b|ib)?$ would: the digits are
// the whole run before the 'g', and the part before them holds a letter. A hand scan, linear and
// without recursion (std::regex recursed per character and overflowed the stack on long names).
bool SplitMemorySuffix(std::string_view key, std::string* base, double* gib) {
  if (EndsWith(key, "gib"))
    key.remove_suffix(3);
  else if (EndsWith(key, "gb"))
    key.remove_suffix(2);
  else if (EndsWith(key, "g"))
    key.remove_suffix(1);
  else
    return false;
  size_t digits = key.size();
  while (digits > 0 && key[digits - 1] >= '0' && key[digits - 1] <= '9') --digits;
  if (digits == key.size()) return false;
  std::string_view prefix = key.substr(0, digits);
  if (std::none_of(prefix.begin(), prefix.end(), [](char c) { return c >= 'a' && c <= 'z'; })) {
    return false;
  }
  if (!ParseDouble(key.substr(digits), gib)) return false;
  *base = std::string(prefix);
  return true;
}

Status ParseFile(const CatalogFiles& files, const std::string& origin, const std::string& name,
                 CsvTable* table) {
  auto it = files.find(name);
  if (it == files.end()) {
    return Status::Corruption(fmt::format("{}: the catalog has no {}", origin, name));
  }
  std::string path = origin == "built-in" ? "data/" + name : origin + "/" + name;
  CsvOptions options;
  options.borrow_text = true;  // the files outlive the table
  return ParseCsv(it->second, path, options, table);
}

// Registers every name and alias of `rows` under its normalized form; two rows claiming one
// name is an error naming both.
template <typename Row>
Status BuildIndex(const std::vector<Row>& rows, const CsvTable& table, const char* what,
                  std::map<std::string, const Row*>* index) {
  for (size_t i = 0; i < rows.size(); ++i) {
    std::vector<std::string> names = rows[i].aliases;
    names.insert(names.begin(), rows[i].name);
    for (const std::string& name : names) {
      std::string key = NormalizeName(name);
      auto [it, inserted] = index->emplace(key, &rows[i]);
      if (!inserted && it->second != &rows[i]) {
        return Status::Corruption(
            fmt::format("{}:{}: field 'aliases': '{}' of {} '{}' already "
                        "names '{}'",
                        table.path, table.rows[i].line, Shown(name), what, Shown(rows[i].name),
                        Shown(it->second->name)));
      }
    }
  }
  return Status::OK();
}

template <typename Row>
std::vector<std::string> AllNames(const std::vector<Row>& rows) {
  std::vector<std::string> names;
  for (const Row& row : rows) {
    names.push_back(row.name);
    names.insert(names.end(), row.aliases.begin(), row.aliases.end());
  }
  return names;
}

}  // namespace

Catalog::Catalog() : lazy_(std::make_unique<Lazy>()) {}
Catalog::~Catalog() = default;
Catalog::Catalog(Catalog&&) noexcept = default;
Catalog& Catalog::operator=(Catalog&&) noexcept = default;

void Catalog::FillInstances() const {
  if (lazy_) Lazy::Make(*this, lazy_->instances);
}

void Catalog::FillModels() const {
  if (lazy_) Lazy::Make(*this, lazy_->models);
}

const std::vector<InstanceType>& Catalog::instances() const {
  FillInstances();
  return instances_;
}

const std::vector<Model>& Catalog::models() const {
  FillModels();
  for (const Model& m : models_) Lazy::FillOperators(*this, &m);
  return models_;
}

// Fills a Catalog from its files in dependency order: instances refer to accelerators, CPUs
// and currencies, so those come first.
Status CatalogBuilder::Build(CatalogFiles files, std::string origin, Catalog* out) {
  Catalog c;
  c.files_ = std::move(files);
  c.origin_ = std::move(origin);
  CsvTable table;
  Status s = ParseFile(c.files_, c.origin_, "accelerators.csv", &table);
  if (s.ok()) s = ParseAccelerators(table, &c.accelerators_);
  if (s.ok()) s = BuildIndex(c.accelerators_, table, "accelerator", &c.accelerator_index_);
  if (s.ok()) s = ParseFile(c.files_, c.origin_, "cpus.csv", &table);
  if (s.ok()) s = ParseCpus(table, &c.cpus_);
  if (s.ok()) s = BuildIndex(c.cpus_, table, "CPU", &c.cpu_index_);
  if (s.ok()) s = ParseFile(c.files_, c.origin_, "currency.csv", &table);
  if (s.ok()) s = ParseCurrencies(table, &c.currencies_);
  if (s.ok()) s = ParseFile(c.files_, c.origin_, "models.csv", &table);
  if (s.ok()) s = ParseModels(table, &c.models_);
  if (s.ok()) s = BuildIndex(c.models_, table, "model", &c.model_index_);
  if (!s.ok()) return s;
  if (c.files_.count("operators.csv")) {
    s = ParseFile(c.files_, c.origin_, "operators.csv", &table);
    if (s.ok()) s = ParseOperators(table, &c.models_);
    if (!s.ok()) return s;
  }
  // Optional files: a catalog without them estimates with default efficiencies and cannot
  // size renders or streams.
  if (c.files_.count("efficiency.csv")) {
    std::vector<EfficiencyFactor> rows;
    s = ParseFile(c.files_, c.origin_, "efficiency.csv", &table);
    if (s.ok()) s = ParseEfficiency(table, &rows);
    if (!s.ok()) return s;
    c.efficiency_ = EfficiencyTable(std::move(rows));
  }
  if (c.files_.count("render.csv")) {
    s = ParseFile(c.files_, c.origin_, "render.csv", &table);
    if (s.ok()) s = ParseRenderScores(table, c, &c.render_scores_);
    if (!s.ok()) return s;
  }
  if (c.files_.count("video_encoders.csv")) {
    s = ParseFile(c.files_, c.origin_, "video_encoders.csv", &table);
    if (s.ok()) s = ParseEncoderRates(table, &c.encoder_rates_);
    if (!s.ok()) return s;
  }

  if (c.files_.count("spot.csv")) {
    s = ParseFile(c.files_, c.origin_, "spot.csv", &table);
    if (s.ok()) s = ParseSpotProfiles(table, &c.spot_profiles_);
    if (!s.ok()) return s;
  }

  // Instance files: every instances/<provider>.csv. The vector is sized once so that the
  // pointers in the index stay valid.
  std::vector<InstanceType> instances;
  for (const auto& [name, contents] : c.files_) {
    if (!StartsWith(name, kInstancesDir) || !EndsWith(name, ".csv")) continue;
    std::string provider = name.substr(10, name.size() - 10 - 4);
    s = ParseFile(c.files_, c.origin_, name, &table);
    if (s.ok()) s = ParseInstances(table, provider, c, &instances);
    if (!s.ok()) return s;
  }
  c.instances_ = std::move(instances);
  // A bare name that two providers share resolves to the first; "provider/name" is exact.
  for (const InstanceType& t : c.instances_) {
    std::string key = ToLower(t.name);
    c.instance_index_.emplace(key, &t);
    c.instance_index_.emplace(t.provider + "/" + key, &t);
  }
  *out = std::move(c);
  return Status::OK();
}

CatalogBuilder::Indexes CatalogBuilder::IndexesOf(const Catalog& c) {
  auto entries = [](const auto& index, const auto& rows) {
    std::vector<std::pair<std::string, size_t>> out;
    for (const auto& [key, row] : index) {
      out.emplace_back(key, static_cast<size_t>(row - rows.data()));
    }
    return out;
  };
  c.FillInstances();
  c.FillModels();
  return {entries(c.accelerator_index_, c.accelerators_), entries(c.cpu_index_, c.cpus_),
          entries(c.model_index_, c.models_), entries(c.instance_index_, c.instances_)};
}

Status Catalog::FromFiles(CatalogFiles files, std::string origin, Catalog* out) {
  return CatalogBuilder::Build(std::move(files), std::move(origin), out);
}

Status Catalog::LoadDirectory(const std::string& dir, Catalog* out) {
  CatalogFiles files;
  Status s = ReadCsvTree(dir, &files);
  if (!s.ok()) return s;
  return FromFiles(std::move(files), dir, out);
}

const CatalogFiles& Catalog::files() const {
  if (!built_in_) return files_;
  // Made once, on the first call: only export and import want every file.
  static const CatalogFiles* const kBuiltIn = [] {
    auto* files = new CatalogFiles;
    for (const EmbeddedFile& f : EmbeddedDataFiles()) {
      files->emplace(f.path, std::string(f.data, f.size));
    }
    return files;
  }();
  return *kBuiltIn;
}

std::optional<std::string_view> Catalog::FindFile(std::string_view path) const {
  if (built_in_) {
    for (const EmbeddedFile& f : EmbeddedDataFiles()) {
      if (path == f.path) return std::string_view(f.data, f.size);
    }
    return std::nullopt;
  }
  auto it = files_.find(std::string(path));
  if (it == files_.end()) return std::nullopt;
  return it->second;
}

Status Catalog::cost_tables(std::shared_ptr<const CostTables>* out) const {
  if (!lazy_) return Status::Corruption("the catalog was moved away");
  std::call_once(lazy_->costs_once, [this] {
    auto tables = std::make_shared<CostTables>();
    lazy_->costs_status = lazy_->read_costs(*this, tables.get());
    if (lazy_->costs_status.ok()) lazy_->costs = std::move(tables);
  });
  if (!lazy_->costs_status.ok()) return lazy_->costs_status;
  *out = lazy_->costs;
  return Status::OK();
}

Status Catalog::FindAccelerator(std::string_view name, const Accelerator** out) const {
  if (name.size() > kMaxNameBytes) return TooLong("GPU", name);
  std::string key = NormalizeName(name);
  if (auto it = accelerator_index_.find(key); it != accelerator_index_.end()) {
    *out = it->second;
    return Status::OK();
  }
  // "RTX 3090 24GB", "a100 80g": a known name followed by a memory size.
  std::string base;
  double gib = 0;
  if (SplitMemorySuffix(key, &base, &gib)) {
    auto matches_memory = [gib](const Accelerator* a) {
      return std::abs(a->memory_bytes / kBytesPerGib - gib) <= 0.05 * gib + 0.5;
    };
    auto it = accelerator_index_.find(base);
    if (it != accelerator_index_.end() && matches_memory(it->second)) {
      *out = it->second;
      return Status::OK();
    }
    // Another variant of the same part with that memory, preferring the base's form factor.
    const Accelerator* best = nullptr;
    for (const auto& [other_key, a] : accelerator_index_) {
      if (!StartsWith(other_key, base) || !matches_memory(a)) continue;
      bool same_form = it != accelerator_index_.end() && a->form_factor == it->second->form_factor;
      if (best == nullptr || same_form) best = a;
      if (same_form) break;
    }
    if (best != nullptr) {
      *out = best;
      return Status::OK();
    }
  }
  return Status::NotFound(fmt::format("unknown GPU '{}'{}", Shown(name),
                                      DidYouMean(ClosestNames(name, AllNames(accelerators_)))));
}

const Accelerator* Catalog::FindAcceleratorByDriverName(std::string_view driver_name) const {
  const Accelerator* found = nullptr;
  if (FindAccelerator(driver_name, &found).ok()) return found;
  std::vector<std::string> words = SplitList(std::string(driver_name), ' ');
  static const std::set<std::string> kNoise = {"nvidia", "tesla", "geforce", "quadro"};
  while (!words.empty() && kNoise.count(ToLower(words.front())) > 0) words.erase(words.begin());
  // "H100 80GB HBM3": the memory type is noise to the catalog, the size is not.
  if (!words.empty() && ToLower(words.back()).rfind("hbm", 0) == 0) words.pop_back();
  while (!words.empty()) {
    if (FindAccelerator(Join(words, " "), &found).ok()) return found;
    words.pop_back();
  }
  return nullptr;
}

const CpuGeneration* Catalog::FindCpu(std::string_view name) const {
  auto it = cpu_index_.find(NormalizeName(name));
  if (it != cpu_index_.end()) return it->second;
  // Clouds print full model strings ("Intel Xeon Platinum 8488C"): match a known alias
  // appearing as a whole word inside it.
  std::string key = NormalizeName(name);
  const CpuGeneration* best = nullptr;
  size_t best_length = 0;
  for (const auto& [alias, cpu] : cpu_index_) {
    if (alias.size() >= 4 && alias.size() > best_length && key.find(alias) != std::string::npos) {
      best = cpu;
      best_length = alias.size();
    }
  }
  return best;
}

Status Catalog::FindModel(std::string_view name, const Model** out) const {
  if (name.size() > kMaxNameBytes) return TooLong("model", name);
  FillModels();
  auto it = model_index_.find(NormalizeName(name));
  if (it != model_index_.end()) {
    Lazy::FillOperators(*this, it->second);
    *out = it->second;
    return Status::OK();
  }
  return Status::NotFound(fmt::format("unknown model '{}'{}", Shown(name),
                                      DidYouMean(ClosestNames(name, AllNames(models_)))));
}

const InstanceType* Catalog::LookupInstance(std::string_view name) const {
  if (name.size() > kMaxNameBytes) return nullptr;
  FillInstances();
  auto it = instance_index_.find(ToLower(Trim(name)));
  return it == instance_index_.end() ? nullptr : it->second;
}

Status Catalog::FindInstance(std::string_view name, const InstanceType** out) const {
  if (name.size() > kMaxNameBytes) return TooLong("instance type", name);
  if (const InstanceType* found = LookupInstance(name)) {
    *out = found;
    return Status::OK();
  }
  std::vector<std::string> names;
  for (const InstanceType& t : instances()) names.push_back(t.name);
  return Status::NotFound(fmt::format("unknown instance type '{}'{}", Shown(name),
                                      DidYouMean(ClosestNames(name, names))));
}

const CurrencyRate* Catalog::FindCurrency(std::string_view code) const {
  // Codes are stored upper case and usually asked for that way: look for the exact code first,
  // without a copy (the recommender converts thousands of prices per request).
  for (const CurrencyRate& c : currencies_) {
    if (c.currency == code) return &c;
  }
  std::string upper(Trim(code));
  for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  for (const CurrencyRate& c : currencies_) {
    if (c.currency == upper) return &c;
  }
  return nullptr;
}

Status Catalog::Convert(double amount, std::string_view from, std::string_view to,
                        double* out) const {
  const CurrencyRate* source = FindCurrency(from);
  const CurrencyRate* target = FindCurrency(to);
  if (source == nullptr || target == nullptr) {
    std::vector<std::string> known;
    for (const CurrencyRate& c : currencies_) known.push_back(c.currency);
    return Status::InvalidArgument(fmt::format("currency: '{}' has no rate; known: {}",
                                               Shown(source == nullptr ? from : to),
                                               Join(known, ", ")));
  }
  *out = source->ConvertTo(amount, *target);
  return Status::OK();
}

const SpotProfile* Catalog::FindSpotProfile(std::string_view provider) const {
  for (const SpotProfile& p : spot_profiles_) {
    if (p.provider == provider) return &p;
  }
  return nullptr;
}

std::vector<std::string> Catalog::Providers() const {
  std::set<std::string> providers;
  for (const InstanceType& t : instances()) providers.insert(t.provider);
  return {providers.begin(), providers.end()};
}

}  // namespace cloudfit

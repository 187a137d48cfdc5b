// The catalog: accelerators, CPU generations, instance types with prices, models and currency
// rates, loaded from the CSV files under data/ (compiled in) or from a directory of the same
// layout. See docs/data-format.md for the files.
#ifndef CLOUDFIT_CATALOG_H_
#define CLOUDFIT_CATALOG_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cloudfit/accelerator.h"
#include "cloudfit/cpu.h"
#include "cloudfit/efficiency.h"
#include "cloudfit/instance.h"
#include "cloudfit/model.h"
#include "cloudfit/status.h"

namespace cloudfit {

struct CostTables;  // cost_tables.h

struct CurrencyRate {
  std::string currency;
  double usd_per_unit = 0;
  std::string as_of;
  std::string source;

  // `amount` of this currency in currency `to`, through their rates in US dollars: the one
  // place the conversion is written (Catalog::Convert, the recommender's and the bill's).
  double ConvertTo(double amount, const CurrencyRate& to) const {
    return amount * usd_per_unit / to.usd_per_unit;
  }
};

// Blender Open Data median score of a GPU (data/render.csv).
struct RenderScore {
  const Accelerator* gpu = nullptr;
  std::string backend;  // OPTIX, CUDA, HIP
  double samples_per_minute = 0;
  std::string source;
};

// Real-time encode streams one NVENC engine sustains (data/video_encoders.csv).
struct EncoderRate {
  std::string architecture;  // as in accelerators.csv: Turing, Ampere, Ada Lovelace, ...
  std::string codec;         // h264, hevc, av1
  std::string resolution;    // 1080p, 4k
  double fps = 0;
  int streams_per_engine = 0;
  std::string source;
};

// How often a provider's spot instances are interrupted (data/spot.csv).
struct SpotProfile {
  std::string provider;
  std::optional<double> interruptions_per_month;  // probability of an interruption in a month
  std::optional<double> restart_minutes;          // interruption to training again
  std::optional<double> notice_seconds;
  std::string source;
};

// The catalog files by path relative to the catalog root, e.g. "instances/aws.csv".
using CatalogFiles = std::map<std::string, std::string>;

// The environment variable that points cloudfit at another catalog directory.
inline constexpr const char* kCatalogEnvVar = "CLOUDFIT_CATALOG";

class Catalog {
 public:
  Catalog();
  ~Catalog();
  Catalog(const Catalog&) = delete;
  Catalog& operator=(const Catalog&) = delete;
  // Moving keeps the addresses of the elements, so pointers between tables stay valid.
  Catalog(Catalog&&) noexcept;
  Catalog& operator=(Catalog&&) noexcept;

  // Parses and cross-checks the files. `origin` names them in messages ("built-in", a path).
  static Status FromFiles(CatalogFiles files, std::string origin, Catalog* out);
  // The data/ files, compiled in: parsed and checked when cloudfit was built, so loading them
  // copies records (built_in_catalog.cc) and gives the same catalog as FromFiles on the text.
  static Status LoadBuiltIn(Catalog* out);
  static Status LoadDirectory(const std::string& dir, Catalog* out);
  // `dir` if not empty, else $CLOUDFIT_CATALOG if set, else the built-in catalog.
  static Status LoadDefault(const std::string& dir, Catalog* out);

  const std::vector<Accelerator>& accelerators() const { return accelerators_; }
  const std::vector<CpuGeneration>& cpus() const { return cpus_; }
  // The built-in catalog makes these two on first use, from any thread: each is a few hundred
  // kilobytes that a command may not read (`instances` reads no model, `estimate` no type).
  const std::vector<InstanceType>& instances() const;
  const std::vector<Model>& models() const;
  const std::vector<CurrencyRate>& currencies() const { return currencies_; }
  const EfficiencyTable& efficiency() const { return efficiency_; }
  EfficiencyTable& mutable_efficiency() { return efficiency_; }  // for fitting
  const std::vector<RenderScore>& render_scores() const { return render_scores_; }
  const std::vector<EncoderRate>& encoder_rates() const { return encoder_rates_; }
  const std::vector<SpotProfile>& spot_profiles() const { return spot_profiles_; }
  const SpotProfile* FindSpotProfile(std::string_view provider) const;
  // Every file of the catalog (the built-in one's are made from the embedded text on the first
  // call). FindFile reads one without that.
  const CatalogFiles& files() const;
  // The text of the file at `path` (relative to the catalog root, "costs/egress.csv"), or
  // nullopt when the catalog has none.
  std::optional<std::string_view> FindFile(std::string_view path) const;
  const std::string& origin() const { return origin_; }
  // The cost tables of costs/ (cost_tables.h; CostData in cost.h looks rows up in them): read
  // and checked on the first call, from any thread, and kept with the catalog; the built-in
  // catalog's are compiled in. A bad row is returned again on every call.
  Status cost_tables(std::shared_ptr<const CostTables>* out) const;

  // Resolves a GPU name through names and aliases, case-insensitively and ignoring spaces,
  // '-', '_' and '.'; a trailing memory size ("RTX 3090 24GB", "a100 80g") picks the variant
  // with that memory. NotFound carries a "did you mean" list.
  Status FindAccelerator(std::string_view name, const Accelerator** out) const;
  // A GPU as the driver names it ("NVIDIA H100 80GB HBM3", "Tesla V100-SXM2-16GB", "NVIDIA
  // A10G"): without the vendor word and the memory type, then with trailing words dropped until
  // a name resolves. nullptr when none does.
  const Accelerator* FindAcceleratorByDriverName(std::string_view driver_name) const;
  const CpuGeneration* FindCpu(std::string_view name) const;
  Status FindModel(std::string_view name, const Model** out) const;
  // Instance types are looked up by their provider's API name, case-insensitively.
  Status FindInstance(std::string_view name, const InstanceType** out) const;
  // The same lookup without the "did you mean" list of a miss (which costs an edit distance to
  // every name): nullptr when there is no such type.
  const InstanceType* LookupInstance(std::string_view name) const;
  const CurrencyRate* FindCurrency(std::string_view code) const;
  // Converts between currencies through the USD rates of currency.csv.
  Status Convert(double amount, std::string_view from, std::string_view to, double* out) const;

  // Names of every provider with at least one instance type, sorted.
  std::vector<std::string> Providers() const;

 private:
  friend class CatalogBuilder;
  struct Lazy;                 // what is read only when first asked for (catalog_builder.h)
  void FillInstances() const;  // instances_ and instance_index_, if not yet made
  void FillModels() const;     // models_ and model_index_, if not yet made

  bool built_in_ = false;  // files_ is empty: the files are the embedded text
  CatalogFiles files_;
  std::string origin_;
  std::unique_ptr<Lazy> lazy_;
  std::vector<Accelerator> accelerators_;
  std::vector<CpuGeneration> cpus_;
  // Made on first use in the built-in catalog (FillInstances, FillModels).
  mutable std::vector<InstanceType> instances_;
  mutable std::vector<Model> models_;
  std::vector<CurrencyRate> currencies_;
  EfficiencyTable efficiency_;
  std::vector<RenderScore> render_scores_;
  std::vector<EncoderRate> encoder_rates_;
  std::vector<SpotProfile> spot_profiles_;
  std::map<std::string, const Accelerator*> accelerator_index_;  // normalized name -> row
  std::map<std::string, const CpuGeneration*> cpu_index_;
  mutable std::map<std::string, const Model*> model_index_;
  mutable std::map<std::string, const InstanceType*> instance_index_;  // lower-case name -> row
};

}  // namespace cloudfit

#endif  // CLOUDFIT_CATALOG_H_

// catalog_compiler DATA_DIR OUTPUT.cc: loads the catalog under DATA_DIR with the ordinary loaders
// (as the built-in catalog, so messages and sources say data/...), reads its cost tables, and
// writes them as the constant records of src/catalog/catalog_records.h. Run by the build: a data
// file the loaders refuse fails the build with their message, and cloudfit starts without
// parsing anything.
#include <fmt/format.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <string_view>

#include "catalog/catalog_builder.h"
#include "catalog/catalog_records.h"
#include "catalog/loaders.h"
#include "catalog/reference_tables.h"
#include "cloudfit/catalog.h"
#include "cloudfit/cost_tables.h"
#include "util/file.h"

namespace cloudfit {
namespace {

// A C++ string literal holding exactly `text`: quotes, backslashes, control characters and
// bytes above 0x7f escaped (octal, three digits, so a following digit cannot join them).
std::string Literal(std::string_view text) {
  std::string out = "\"";
  for (char ch : text) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20 || c >= 0x7f || c == '?') {  // '?': no trigraph can form
      out += fmt::format("\\{:03o}", c);
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

// Every distinct text of the records, end to end, written as one char array: a record names
// its text by offset and size (catalog_records.h), which needs no relocation at start-up.
// Equal texts (the long notes many price rows share) are stored once.
class TextPool {
 public:
  // The RecordText initializer of `text`.
  std::string Add(std::string_view text) {
    auto [it, added] = offsets_.try_emplace(std::string(text), size_);
    if (added) {
      pieces_.push_back(Literal(text));
      size_ += text.size();
    }
    return fmt::format("{{{}, {}}}", it->second, text.size());
  }
  // The array's definition.
  std::string Source() const {
    if (size_ > UINT32_MAX) {
      std::cerr << "catalog_compiler: the catalog's text exceeds 4 GiB\n";
      std::exit(1);
    }
    std::string out = "constexpr char kText[] =";
    if (pieces_.empty()) out += " \"\"";
    for (const std::string& piece : pieces_) out += "\n    " + piece;
    return out + ";\n\n";
  }

 private:
  std::map<std::string, size_t, std::less<>> offsets_;
  std::vector<std::string> pieces_;
  size_t size_ = 0;
};

TextPool& Texts() {
  static TextPool pool;
  return pool;
}

// A RecordText initializer for `text`.
std::string Str(std::string_view text) { return Texts().Add(text); }

// A double literal that reads back as exactly `value` (fmt writes the shortest such digits).
std::string Num(double value) {
  std::string out = fmt::format("{}", value);
  if (out.find_first_of(".e") == std::string::npos) out += ".0";
  return out;
}

std::string Opt(const std::optional<double>& value) { return value ? Num(*value) : "std::nullopt"; }

template <size_t N>
std::string Opts(const std::array<std::optional<double>, N>& values) {
  std::string out = "{{";
  for (size_t i = 0; i < N; ++i) out += (i ? ", " : "") + Opt(values[i]);
  return out + "}}";
}

std::string Bool(bool value) { return value ? "true" : "false"; }

// One brace-enclosed initializer of `fields`, each already C++ text or a whole number.
inline std::string Field(const std::string& text) { return text; }
inline std::string Field(int value) { return std::to_string(value); }
inline std::string Field(size_t value) { return std::to_string(value); }
template <typename... Fields>
std::string Init(const Fields&... fields) {
  std::string out = "{";
  bool first = true;
  ((out += (first ? "" : ", ") + Field(fields), first = false), ...);
  return out + "}";
}

std::string Span(size_t first, size_t count) { return Init(first, count); }

template <typename Enum>
std::string EnumValue(const char* type, Enum value) {
  return fmt::format("static_cast<{}>({})", type, static_cast<int>(value));
}

// Index of `row` in `rows`, -1 for nullptr.
template <typename Row>
int IndexOf(const std::vector<Row>& rows, const Row* row) {
  return row == nullptr ? -1 : static_cast<int>(row - rows.data());
}

// One array of records, and the RecordTable naming it.
class Arrays {
 public:
  // Starts array `name` of `type`; Row() adds one initializer.
  void Begin(std::string type, std::string name) {
    type_ = std::move(type);
    name_ = std::move(name);
    rows_.clear();
  }
  void Row(std::string initializer) { rows_.push_back(std::move(initializer)); }
  size_t size() const { return rows_.size(); }
  // Ends the array; `field` is the CatalogRecords member.
  void End() {
    if (rows_.empty()) {
      tables_.push_back("{nullptr, 0}");
      return;
    }
    body_ += fmt::format("constexpr {} {}[] = {{\n", type_, name_);
    for (const std::string& row : rows_) body_ += "    " + row + ",\n";
    body_ += "};\n\n";
    tables_.push_back(fmt::format("{{{0}, std::size({0})}}", name_));
  }

  std::string Source() const {
    std::string out =
        "// Generated by src/catalog/catalog_compiler.cc from data/ at build time. Do not edit.\n"
        "#include <iterator>\n\n#include \"catalog/catalog_records.h\"\n\n"
        "namespace cloudfit {\n\nnamespace {\n\n";
    out += Texts().Source();
    out += body_;
    out +=
        "}  // namespace\n\nextern const CatalogRecords kBuiltInCatalogRecords = {\n    kText,\n";
    for (const std::string& table : tables_) out += "    " + table + ",\n";
    out += "};\n\n}  // namespace cloudfit\n";
    return out;
  }

 private:
  std::string type_, name_;
  std::vector<std::string> rows_;
  std::string body_;
  std::vector<std::string> tables_;  // in CatalogRecords order
};

// The alias lists, pooled: each list's span in the pool.
class StringPool {
 public:
  std::string Add(const std::vector<std::string>& list) {
    std::string span = Span(strings_.size(), list.size());
    strings_.insert(strings_.end(), list.begin(), list.end());
    return span;
  }
  const std::vector<std::string>& strings() const { return strings_; }

 private:
  std::vector<std::string> strings_;
};

std::string Records(const Catalog& c, const CostTables& costs,
                    const std::map<std::string, CsvTable>& tables) {
  // Rows that hold lists come first, so the pools are complete when written.
  StringPool aliases;
  std::vector<std::string> accelerators, cpus, models, operators, instances, regions;
  for (const Accelerator& a : c.accelerators()) {
    accelerators.push_back(
        Init(Str(a.name), Str(a.vendor), aliases.Add(a.aliases), Str(a.architecture),
             Str(a.compute_capability), Str(a.form_factor), Num(a.memory_bytes), Str(a.memory_type),
             Num(a.memory_bandwidth_bytes_per_s), Opts(a.peak_flops), a.sm_count,
             Num(a.peak_clock_mhz), Num(a.sustained_clock_mhz), Opt(a.fp16_acc16_flops),
             Num(a.l2_cache_bytes), Num(a.measured_bandwidth_bytes_per_s),
             Opt(a.measured_gemm_fp16_flops), Opt(a.measured_gemm_tf32_flops),
             Opt(a.measured_gemm_fp8_flops), Str(a.physics_source), Num(a.nvlink_bytes_per_s),
             a.pcie_gen, Num(a.tdp_w), a.rt_cores, a.nvenc, Bool(a.av1_encode), Bool(a.vgpu),
             a.launch_year, Str(a.source), Str(a.as_of), Str(a.notes)));
  }
  for (const CpuGeneration& p : c.cpus()) {
    cpus.push_back(Init(Str(p.name), Str(p.vendor), aliases.Add(p.aliases), Str(p.arch), Str(p.isa),
                        Num(p.sustained_hz), p.threads_per_core, Num(p.fp32_flops_per_vcpu),
                        Opt(p.bf16_flops_per_vcpu), Opt(p.int8_ops_per_vcpu), p.cores_per_socket,
                        p.memory_channels, Str(p.memory_type),
                        Num(p.memory_bandwidth_bytes_per_s_per_socket), p.launch_year,
                        Str(p.source), Str(p.as_of)));
  }
  for (const Model& m : c.models()) {
    std::string ops = Span(operators.size(), m.operators.size());
    for (const Operator& op : m.operators) {
      operators.push_back(Init(Str(op.label), EnumValue("OpKind", op.kind), Num(op.m), Num(op.n),
                               Num(op.k), Num(op.groups), Num(op.repeats), Num(op.read_elements),
                               Num(op.written_elements), Num(op.saved_index_bytes),
                               EnumValue("OpWhen", op.when), Bool(op.spatial), Bool(op.trainable),
                               Bool(op.causal), Bool(op.in_place), Bool(op.freed), Str(op.source)));
    }
    models.push_back(Init(Str(m.name), aliases.Add(m.aliases), Str(m.family), Num(m.params),
                          Num(m.active_params), m.layers, m.hidden, m.heads, m.kv_heads,
                          m.ffn_hidden, m.vocab, m.context, m.experts, m.experts_per_token,
                          Bool(m.tied_embeddings), Opt(m.gflops_per_sample), m.resolution,
                          Str(m.compute_class), ops, Str(m.source), Str(m.as_of), Str(m.notes)));
  }
  for (const InstanceType& t : c.instances()) {
    std::string span = Span(regions.size(), t.regions.size());
    for (const RegionPrice& r : t.regions) {
      regions.push_back(Init(Str(r.region), Opts(r.per_hour), Str(r.currency), r.as_of_days,
                             Str(r.source), Str(r.notes),
                             std::to_string(r.lowest_over_regions_modes) + "u"));
    }
    instances.push_back(
        Init(Str(t.provider), Str(t.name), Str(t.family), IndexOf(c.accelerators(), t.gpu),
             Num(t.gpu_count), Num(t.gpu_memory_bytes), t.vcpus, Num(t.memory_bytes),
             IndexOf(c.cpus(), t.cpu), Str(t.cpu_name), Str(t.arch), Num(t.network_bits_per_s),
             EnumValue("Interconnect", t.interconnect), Num(t.local_disk_bytes),
             Str(t.local_disk_type), span, Str(t.source), Str(t.shape_source)));
  }

  // In the order of CatalogRecords' members.
  Arrays out;
  auto table = [&out](const char* type, const char* name, const std::vector<std::string>& rows) {
    out.Begin(type, name);
    for (const std::string& row : rows) out.Row(row);
    out.End();
  };
  std::vector<std::string> strings;
  for (const std::string& s : aliases.strings()) strings.push_back(Str(s));
  table("RecordText", "kStrings", strings);
  table("AcceleratorRecord", "kAccelerators", accelerators);
  table("CpuRecord", "kCpus", cpus);
  out.Begin("CurrencyRecord", "kCurrencies");
  for (const CurrencyRate& r : c.currencies()) {
    out.Row(Init(Str(r.currency), Num(r.usd_per_unit), Str(r.as_of), Str(r.source)));
  }
  out.End();
  table("OperatorRecord", "kOperators", operators);
  table("ModelRecord", "kModels", models);
  table("RegionPriceRecord", "kRegionPrices", regions);
  table("InstanceRecord", "kInstances", instances);
  out.Begin("EfficiencyRecord", "kEfficiency");
  for (const EfficiencyFactor& f : c.efficiency().rows()) {
    out.Row(Init(Str(f.parameter), Str(f.stack), Str(f.group), Num(f.value), Str(f.fitted_to),
                 Str(f.source)));
  }
  out.End();
  out.Begin("RenderScoreRecord", "kRenderScores");
  for (const RenderScore& r : c.render_scores()) {
    out.Row(Init(IndexOf(c.accelerators(), r.gpu), Str(r.backend), Num(r.samples_per_minute),
                 Str(r.source)));
  }
  out.End();
  out.Begin("EncoderRateRecord", "kEncoderRates");
  for (const EncoderRate& r : c.encoder_rates()) {
    out.Row(Init(Str(r.architecture), Str(r.codec), Str(r.resolution), Num(r.fps),
                 r.streams_per_engine, Str(r.source)));
  }
  out.End();
  out.Begin("SpotProfileRecord", "kSpotProfiles");
  for (const SpotProfile& p : c.spot_profiles()) {
    out.Row(Init(Str(p.provider), Opt(p.interruptions_per_month), Opt(p.restart_minutes),
                 Opt(p.notice_seconds), Str(p.source)));
  }
  out.End();
  CatalogBuilder::Indexes indexes = CatalogBuilder::IndexesOf(c);
  for (const auto& [name, entries] : {std::pair{"kAcceleratorIndex", &indexes.accelerators},
                                      {"kCpuIndex", &indexes.cpus},
                                      {"kModelIndex", &indexes.models},
                                      {"kInstanceIndex", &indexes.instances}}) {
    out.Begin("IndexRecord", name);
    for (const auto& [key, row] : *entries) out.Row(Init(Str(key), Field(row)));
    out.End();
  }

  out.Begin("EgressPriceRecord", "kEgress");
  for (const EgressPrice& p : costs.egress) {
    out.Row(Init(Str(p.provider), Str(p.destination), Opt(p.usd_per_gb), Num(p.free_gb_per_month),
                 Str(p.source), Str(p.as_of)));
  }
  out.End();
  out.Begin("StoragePriceRecord", "kStorage");
  for (const StoragePrice& p : costs.storage) {
    out.Row(Init(Str(p.provider), Str(p.storage_class), Opt(p.usd_per_gb_month), Str(p.source),
                 Str(p.as_of)));
  }
  out.End();
  out.Begin("LicencePriceRecord", "kLicences");
  for (const LicencePrice& p : costs.licences) {
    out.Row(Init(Str(p.licence), Str(p.provider), Str(p.unit), Opt(p.usd), Str(p.source),
                 Str(p.notes)));
  }
  out.End();
  out.Begin("BillingRuleRecord", "kBilling");
  for (const BillingRule& p : costs.billing) {
    out.Row(Init(Str(p.provider), Num(p.increment_s), Num(p.minimum_s), Str(p.source)));
  }
  out.End();
  out.Begin("SpotRateRecord", "kSpotRates");
  for (const SpotRate& p : costs.spot_rates) {
    out.Row(Init(Str(p.provider), Str(p.gpu), Str(p.band), Num(p.interruptions_per_month),
                 Str(p.source), Str(p.as_of), Bool(p.assumed)));
  }
  out.End();
  out.Begin("StreamBitrateRecord", "kBitrates");
  for (const StreamBitrate& p : costs.bitrates) {
    out.Row(Init(Str(p.codec), Num(p.mbps_1080p60), Str(p.source)));
  }
  out.End();

  std::vector<std::string> table_rows, cells, lines;
  for (const auto& [name, parsed] : tables) {
    std::string header = Span(cells.size(), parsed.header.size());
    for (const std::string& column : parsed.header) cells.push_back(Str(column));
    std::string fields = Span(cells.size(), parsed.rows.size() * parsed.header.size());
    std::string starts = Span(lines.size(), parsed.rows.size());
    for (const CsvRow& row : parsed.rows) {
      for (std::string_view field : row.fields) cells.push_back(Str(field));
      lines.push_back(std::to_string(row.line));
    }
    table_rows.push_back(Init(Str(name), header, fields, starts));
  }
  table("TableRecord", "kTables", table_rows);
  table("RecordText", "kCells", cells);
  table("int", "kLines", lines);
  return out.Source();
}

int Main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: catalog_compiler DATA_DIR OUTPUT.cc\n";
    return 2;
  }
  CatalogFiles files;
  Status s = ReadCsvTree(argv[1], &files);
  Catalog catalog;
  if (s.ok()) s = Catalog::FromFiles(std::move(files), "built-in", &catalog);
  CostTables costs;
  if (s.ok()) s = ReadCostTables(catalog, &costs);
  // The reference tables must parse; their rows are checked where they are used.
  std::map<std::string, CsvTable> tables;
  for (const std::string& name : ReferenceTableNames()) {
    std::optional<std::string_view> text = catalog.FindFile(name);
    if (!s.ok() || !text) continue;
    s = ParseCsv(*text, "data/" + name, CsvOptions(), &tables[name]);
  }
  if (!s.ok()) {
    std::cerr << "catalog_compiler: the built-in catalog does not load: " << s.message() << "\n";
    return 1;
  }
  std::string source = Records(catalog, costs, tables);
  std::string old;
  if (ReadFile(argv[2], &old).ok() && old == source) return 0;  // keeps its time: no rebuild
  s = WriteFileAtomically(argv[2], source);
  if (!s.ok()) {
    std::cerr << "catalog_compiler: " << s.message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace cloudfit

int main(int argc, char** argv) { return cloudfit::Main(argc, argv); }

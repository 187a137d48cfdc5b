// The built-in catalog compiled into records at build time (src/catalog/catalog_compiler.cc) is the
// catalog the loaders make from the same text: every field of every table, the cost tables, the
// name indexes and the files. The dump below is written apart from the compiler and the record
// reader, so that a field either of them drops or swaps shows here.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "catalog/catalog_builder.h"
#include "catalog/embedded_data.h"
#include "catalog/reference_tables.h"
#include "cloudfit/catalog.h"
#include "cloudfit/cost_tables.h"
#include "test_support.h"

namespace cloudfit {
namespace {

// Exact: the shortest digits that read back as the same double.
std::string N(double v) { return fmt::format("{}", v); }
std::string N(const std::optional<double>& v) { return v ? N(*v) : "-"; }
template <size_t K>
std::string N(const std::array<std::optional<double>, K>& values) {
  std::string out;
  for (const auto& v : values) out += N(v) + "/";
  return out;
}
std::string L(const std::vector<std::string>& list) {
  return fmt::format("[{}]", fmt::join(list, "|"));
}

// One line per row, every field named.
class Dump {
 public:
  template <typename... Fields>
  void Row(const char* table, const Fields&... fields) {
    out_ += table;
    ((out_ += " " + Field(fields)), ...);
    out_ += "\n";
  }
  const std::string& text() const { return out_; }

 private:
  static std::string Field(const std::string& s) { return "'" + s + "'"; }
  static std::string Field(const char* s) { return s; }
  static std::string Field(int v) { return std::to_string(v); }
  static std::string Field(size_t v) { return std::to_string(v); }
  static std::string Field(bool v) { return v ? "true" : "false"; }
  std::string out_;
};

std::string DumpCatalog(const Catalog& c) {
  Dump d;
  for (const Accelerator& a : c.accelerators()) {
    d.Row("gpu", a.name, a.vendor, L(a.aliases), a.architecture, a.compute_capability,
          a.form_factor, N(a.memory_bytes), a.memory_type, N(a.memory_bandwidth_bytes_per_s),
          N(a.peak_flops), a.sm_count, N(a.peak_clock_mhz), N(a.sustained_clock_mhz),
          N(a.fp16_acc16_flops), N(a.l2_cache_bytes), N(a.measured_bandwidth_bytes_per_s),
          N(a.measured_gemm_fp16_flops), N(a.measured_gemm_tf32_flops),
          N(a.measured_gemm_fp8_flops), a.physics_source, N(a.nvlink_bytes_per_s), a.pcie_gen,
          N(a.tdp_w), a.rt_cores, a.nvenc, a.av1_encode, a.vgpu, a.launch_year, a.source, a.as_of,
          a.notes);
  }
  for (const CpuGeneration& p : c.cpus()) {
    d.Row("cpu", p.name, p.vendor, L(p.aliases), p.arch, p.isa, N(p.sustained_hz),
          p.threads_per_core, N(p.fp32_flops_per_vcpu), N(p.bf16_flops_per_vcpu),
          N(p.int8_ops_per_vcpu), p.cores_per_socket, p.memory_channels, p.memory_type,
          N(p.memory_bandwidth_bytes_per_s_per_socket), p.launch_year, p.source, p.as_of);
  }
  for (const CurrencyRate& r : c.currencies()) {
    d.Row("currency", r.currency, N(r.usd_per_unit), r.as_of, r.source);
  }
  for (const Model& m : c.models()) {
    d.Row("model", m.name, L(m.aliases), m.family, N(m.params), N(m.active_params), m.layers,
          m.hidden, m.heads, m.kv_heads, m.ffn_hidden, m.vocab, m.context, m.experts,
          m.experts_per_token, m.tied_embeddings, N(m.gflops_per_sample), m.resolution,
          m.compute_class, m.source, m.as_of, m.notes, m.operators.size());
    for (const Operator& op : m.operators) {
      d.Row("op", op.label, static_cast<int>(op.kind), N(op.m), N(op.n), N(op.k), N(op.groups),
            N(op.repeats), N(op.read_elements), N(op.written_elements), N(op.saved_index_bytes),
            static_cast<int>(op.when), op.spatial, op.trainable, op.causal, op.in_place, op.freed,
            op.source);
    }
  }
  for (const InstanceType& t : c.instances()) {
    d.Row("instance", t.provider, t.name, t.family, t.gpu ? t.gpu->name : "-", N(t.gpu_count),
          N(t.gpu_memory_bytes), t.vcpus, N(t.memory_bytes), t.cpu ? t.cpu->name : "-", t.cpu_name,
          t.arch, N(t.network_bits_per_s), static_cast<int>(t.interconnect), N(t.local_disk_bytes),
          t.local_disk_type, t.source, t.shape_source, t.regions.size());
    for (const RegionPrice& r : t.regions) {
      d.Row("price", r.region, N(r.per_hour), r.currency, r.as_of_days, r.source, r.notes,
            static_cast<int>(r.lowest_over_regions_modes));
    }
  }
  for (const EfficiencyFactor& f : c.efficiency().rows()) {
    d.Row("efficiency", f.parameter, f.stack, f.group, N(f.value), f.fitted_to, f.source);
  }
  for (const RenderScore& r : c.render_scores()) {
    d.Row("render", r.gpu ? r.gpu->name : "-", r.backend, N(r.samples_per_minute), r.source);
  }
  for (const EncoderRate& r : c.encoder_rates()) {
    d.Row("encoder", r.architecture, r.codec, r.resolution, N(r.fps), r.streams_per_engine,
          r.source);
  }
  for (const SpotProfile& p : c.spot_profiles()) {
    d.Row("spot", p.provider, N(p.interruptions_per_month), N(p.restart_minutes),
          N(p.notice_seconds), p.source);
  }
  d.Row("origin", c.origin());
  return d.text();
}

std::string DumpCosts(const CostTables& t) {
  Dump d;
  for (const EgressPrice& p : t.egress) {
    d.Row("egress", p.provider, p.destination, N(p.usd_per_gb), N(p.free_gb_per_month), p.source,
          p.as_of);
  }
  for (const StoragePrice& p : t.storage) {
    d.Row("storage", p.provider, p.storage_class, N(p.usd_per_gb_month), p.source, p.as_of);
  }
  for (const LicencePrice& p : t.licences) {
    d.Row("licence", p.licence, p.provider, p.unit, N(p.usd), p.source, p.notes);
  }
  for (const BillingRule& p : t.billing) {
    d.Row("billing", p.provider, N(p.increment_s), N(p.minimum_s), p.source);
  }
  for (const SpotRate& p : t.spot_rates) {
    d.Row("spot_rate", p.provider, p.gpu, p.band, N(p.interruptions_per_month), p.source, p.as_of,
          p.assumed);
  }
  for (const StreamBitrate& p : t.bitrates) {
    d.Row("bitrate", p.codec, N(p.mbps_1080p60), p.source);
  }
  return d.text();
}

// The embedded text, parsed and checked as a catalog directory is.
Catalog ParsedBuiltIn() {
  CatalogFiles files;
  for (const EmbeddedFile& f : EmbeddedDataFiles())
    files.emplace(f.path, std::string(f.data, f.size));
  Catalog c;
  Status s = Catalog::FromFiles(std::move(files), "built-in", &c);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return c;
}

// A field added to a catalog type must be taught to catalog_records.h,
// src/catalog/catalog_compiler.cc, built_in_catalog.cc and the dump above; the sizes tell when one
// was added (most fields change them; checked where they are known: libstdc++ on x86-64).
TEST(BuiltInRecordsTest, CatalogTypesHaveTheFieldsTheRecordsCopy) {
#if defined(__GLIBCXX__) && defined(__x86_64__)
  const char* teach =
      "a field was added: teach it to catalog_records.h, catalog_compiler.cc, "
      "built_in_catalog.cc and built_in_catalog_test.cc, then update this size";
  EXPECT_EQ(sizeof(Accelerator), 600u) << teach;
  EXPECT_EQ(sizeof(CpuGeneration), 328u) << teach;
  EXPECT_EQ(sizeof(CurrencyRate), 104u) << teach;
  EXPECT_EQ(sizeof(Operator), 152u) << teach;
  EXPECT_EQ(sizeof(Model), 320u) << teach;
  EXPECT_EQ(sizeof(RegionPrice), 208u) << teach;
  EXPECT_EQ(sizeof(InstanceType), 352u) << teach;
  EXPECT_EQ(sizeof(EfficiencyFactor), 168u) << teach;
  EXPECT_EQ(sizeof(RenderScore), 80u) << teach;
  EXPECT_EQ(sizeof(EncoderRate), 144u) << teach;
  EXPECT_EQ(sizeof(SpotProfile), 112u) << teach;
  EXPECT_EQ(sizeof(EgressPrice), 152u) << teach;
  EXPECT_EQ(sizeof(StoragePrice), 144u) << teach;
  EXPECT_EQ(sizeof(LicencePrice), 176u) << teach;
  EXPECT_EQ(sizeof(BillingRule), 80u) << teach;
  EXPECT_EQ(sizeof(SpotRate), 176u) << teach;
  EXPECT_EQ(sizeof(StreamBitrate), 72u) << teach;
#else
  GTEST_SKIP() << "sizes are checked with libstdc++ on x86-64";
#endif
}

TEST(BuiltInRecordsTest, EveryFieldEqualsTheParsedText) {
  const Catalog& compiled = testing::BuiltInCatalog();
  Catalog parsed = ParsedBuiltIn();
  ASSERT_FALSE(parsed.instances().empty());
  std::string want = DumpCatalog(parsed);
  std::string got = DumpCatalog(compiled);
  EXPECT_GT(want.size(), 1000000u);  // every table is there
  if (got == want) return;
  // The first line that differs, rather than two megabytes.
  size_t at = 0;
  while (at < got.size() && at < want.size() && got[at] == want[at]) ++at;
  size_t line = want.rfind('\n', at);
  line = line == std::string::npos ? 0 : line + 1;
  ADD_FAILURE() << "compiled: " << got.substr(line, got.find('\n', at) - line)
                << "\nparsed:   " << want.substr(line, want.find('\n', at) - line);
}

TEST(BuiltInRecordsTest, CostTablesEqualTheParsedText) {
  std::shared_ptr<const CostTables> compiled, parsed;
  ASSERT_TRUE(testing::BuiltInCatalog().cost_tables(&compiled).ok());
  Catalog text = ParsedBuiltIn();
  ASSERT_TRUE(text.cost_tables(&parsed).ok());
  EXPECT_FALSE(parsed->spot_rates.empty());
  EXPECT_EQ(DumpCosts(*compiled), DumpCosts(*parsed));
  // Read once and kept.
  std::shared_ptr<const CostTables> again;
  ASSERT_TRUE(testing::BuiltInCatalog().cost_tables(&again).ok());
  EXPECT_EQ(again.get(), compiled.get());
}

TEST(BuiltInRecordsTest, ReferenceTablesEqualTheParsedText) {
  const Catalog& compiled = testing::BuiltInCatalog();
  Catalog parsed = ParsedBuiltIn();
  for (const std::string& name : ReferenceTableNames()) {
    std::shared_ptr<const CsvTable> x, y;
    ASSERT_TRUE(ReadReferenceTable(compiled, name, &x).ok()) << name;
    ASSERT_TRUE(ReadReferenceTable(parsed, name, &y).ok()) << name;
    EXPECT_EQ(x->path, y->path);
    EXPECT_EQ(x->header, y->header) << name;
    EXPECT_EQ(x->column_index, y->column_index) << name;
    ASSERT_EQ(x->rows.size(), y->rows.size()) << name;
    EXPECT_FALSE(x->rows.empty()) << name;
    for (size_t i = 0; i < x->rows.size(); ++i) {
      EXPECT_EQ(x->rows[i].line, y->rows[i].line) << name;
      EXPECT_EQ(x->rows[i].fields, y->rows[i].fields) << name << " row " << i;
    }
    // Parsed once and kept.
    std::shared_ptr<const CsvTable> again;
    ASSERT_TRUE(ReadReferenceTable(parsed, name, &again).ok());
    EXPECT_EQ(again.get(), y.get());
  }
}

TEST(BuiltInRecordsTest, EveryNameResolvesToTheSameRow) {
  const Catalog& compiled = testing::BuiltInCatalog();
  Catalog parsed = ParsedBuiltIn();
  CatalogBuilder::Indexes want = CatalogBuilder::IndexesOf(parsed);
  EXPECT_GT(want.instances.size(), 500u);
  EXPECT_TRUE(CatalogBuilder::IndexesOf(compiled) == want);
  auto index = [](const auto& rows, const auto* row) { return row - rows.data(); };
  for (const Accelerator& a : parsed.accelerators()) {
    std::vector<std::string> names = a.aliases;
    names.push_back(a.name);
    for (const std::string& name : names) {
      const Accelerator *x = nullptr, *y = nullptr;
      ASSERT_TRUE(compiled.FindAccelerator(name, &x).ok()) << name;
      ASSERT_TRUE(parsed.FindAccelerator(name, &y).ok()) << name;
      EXPECT_EQ(index(compiled.accelerators(), x), index(parsed.accelerators(), y)) << name;
    }
  }
  for (const CpuGeneration& p : parsed.cpus()) {
    for (const std::string& name : p.aliases) {
      EXPECT_EQ(index(compiled.cpus(), compiled.FindCpu(name)),
                index(parsed.cpus(), parsed.FindCpu(name)))
          << name;
    }
  }
  for (const Model& m : parsed.models()) {
    std::vector<std::string> names = m.aliases;
    names.push_back(m.name);
    for (const std::string& name : names) {
      const Model *x = nullptr, *y = nullptr;
      ASSERT_TRUE(compiled.FindModel(name, &x).ok()) << name;
      ASSERT_TRUE(parsed.FindModel(name, &y).ok()) << name;
      EXPECT_EQ(index(compiled.models(), x), index(parsed.models(), y)) << name;
    }
  }
  for (const InstanceType& t : parsed.instances()) {
    for (const std::string& name : {t.name, t.provider + "/" + t.name}) {
      const InstanceType *x = nullptr, *y = nullptr;
      ASSERT_TRUE(compiled.FindInstance(name, &x).ok()) << name;
      ASSERT_TRUE(parsed.FindInstance(name, &y).ok()) << name;
      EXPECT_EQ(index(compiled.instances(), x), index(parsed.instances(), y)) << name;
    }
  }
}

TEST(BuiltInRecordsTest, FilesAreTheEmbeddedText) {
  const Catalog& compiled = testing::BuiltInCatalog();
  ASSERT_EQ(compiled.files().size(), EmbeddedDataFiles().size());
  for (const EmbeddedFile& f : EmbeddedDataFiles()) {
    std::string_view text(f.data, f.size);
    EXPECT_EQ(compiled.files().at(f.path), text) << f.path;
    ASSERT_TRUE(compiled.FindFile(f.path).has_value()) << f.path;
    EXPECT_EQ(*compiled.FindFile(f.path), text) << f.path;
  }
  EXPECT_FALSE(compiled.FindFile("no/such.csv").has_value());
}

#ifdef CLOUDFIT_CATALOG_COMPILER
// A data file the loaders refuse fails the build, with their message.
TEST(BuiltInRecordsTest, TheCompilerRefusesABadDataFileWithTheLoadersMessage) {
  testing::TempDir dir;
  for (const EmbeddedFile& f : EmbeddedDataFiles()) {
    std::string text(f.data, f.size);
    if (std::string(f.path) == "currency.csv") text += "usd,1.0,https://example.com,2026-01-01\n";
    dir.Write("data/" + std::string(f.path), text);
  }
  testing::ProgramRun run =
      testing::RunProgram(CLOUDFIT_CATALOG_COMPILER, dir.path(), "data out.cc");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_NE(run.err.find("data/currency.csv:"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("field 'currency': 'usd' is not an upper-case ISO 4217 code"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(testing::ReadWholeFile(dir.path() + "/out.cc"), "");

  testing::TempDir good;
  for (const EmbeddedFile& f : EmbeddedDataFiles()) {
    good.Write("data/" + std::string(f.path), std::string(f.data, f.size));
  }
  run = testing::RunProgram(CLOUDFIT_CATALOG_COMPILER, good.path(), "data out.cc");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(testing::ReadWholeFile(good.path() + "/out.cc").find("kBuiltInCatalogRecords"),
            std::string::npos);
}
#endif

}  // namespace
}  // namespace cloudfit

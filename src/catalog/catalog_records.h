// The built-in catalog as plain records: what catalog_compiler.cc writes into the binary at build
// time after loading data/ with the ordinary loaders, so that start-up copies checked values
// instead of parsing and checking CSV text again (see docs/data-format.md).
//
// Each record mirrors one catalog type field by field, in the same order, with literal types
// only (so the arrays are constant data in the binary): text as a RecordText, lists as a span
// of a shared pool, pointers between tables as an index (-1: none). The records hold no
// addresses: in a position-independent executable each one is a relocation the loader writes
// at every start (a string_view per field made ~21,000 of them, and ~180 pages copied).
#ifndef CLOUDFIT_CATALOG_CATALOG_RECORDS_H_
#define CLOUDFIT_CATALOG_CATALOG_RECORDS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "cloudfit/catalog.h"
#include "cloudfit/cost_tables.h"

namespace cloudfit {

// Text of the records: bytes [offset, offset + size) of CatalogRecords::text.
struct RecordText {
  uint32_t offset = 0;
  uint32_t size = 0;
};

// Rows [first, first + count) of a pool.
struct RecordSpan {
  uint32_t first = 0;
  uint32_t count = 0;
};

// A table of records.
template <typename Record>
struct RecordTable {
  const Record* rows = nullptr;
  size_t size = 0;
  const Record* begin() const { return rows; }
  const Record* end() const { return rows + size; }
  const Record& operator[](size_t i) const { return rows[i]; }
};

struct AcceleratorRecord {
  RecordText name, vendor;
  RecordSpan aliases;  // of CatalogRecords::strings
  RecordText architecture, compute_capability, form_factor;
  double memory_bytes;
  RecordText memory_type;
  double memory_bandwidth_bytes_per_s;
  std::array<std::optional<double>, kPrecisionCount> peak_flops;
  int sm_count;
  double peak_clock_mhz, sustained_clock_mhz;
  std::optional<double> fp16_acc16_flops;
  double l2_cache_bytes, measured_bandwidth_bytes_per_s;
  std::optional<double> measured_gemm_fp16_flops, measured_gemm_tf32_flops, measured_gemm_fp8_flops;
  RecordText physics_source;
  double nvlink_bytes_per_s;
  int pcie_gen;
  double tdp_w;
  int rt_cores, nvenc;
  bool av1_encode, vgpu;
  int launch_year;
  RecordText source, as_of, notes;
};

struct CpuRecord {
  RecordText name, vendor;
  RecordSpan aliases;  // of CatalogRecords::strings
  RecordText arch, isa;
  double sustained_hz;
  int threads_per_core;
  double fp32_flops_per_vcpu;
  std::optional<double> bf16_flops_per_vcpu, int8_ops_per_vcpu;
  int cores_per_socket, memory_channels;
  RecordText memory_type;
  double memory_bandwidth_bytes_per_s_per_socket;
  int launch_year;
  RecordText source, as_of;
};

struct CurrencyRecord {
  RecordText currency;
  double usd_per_unit;
  RecordText as_of, source;
};

struct OperatorRecord {
  RecordText label;
  OpKind kind;
  double m, n, k, groups, repeats, read_elements, written_elements, saved_index_bytes;
  OpWhen when;
  bool spatial, trainable, causal, in_place, freed;
  RecordText source;
};

struct ModelRecord {
  RecordText name;
  RecordSpan aliases;  // of CatalogRecords::strings
  RecordText family;
  double params, active_params;
  int layers, hidden, heads, kv_heads, ffn_hidden, vocab, context, experts, experts_per_token;
  bool tied_embeddings;
  std::optional<double> gflops_per_sample;
  int resolution;
  RecordText compute_class;
  RecordSpan operators;  // of CatalogRecords::operators
  RecordText source, as_of, notes;
};

struct RegionPriceRecord {
  RecordText region;
  std::array<std::optional<double>, kPricingModeCount> per_hour;
  RecordText currency;
  int as_of_days;
  RecordText source, notes;
  unsigned lowest_over_regions_modes;  // RegionPrice::lowest_over_regions_modes
};

struct InstanceRecord {
  RecordText provider, name, family;
  int gpu;  // index into CatalogRecords::accelerators, -1 none
  double gpu_count, gpu_memory_bytes;
  int vcpus;
  double memory_bytes;
  int cpu;  // index into CatalogRecords::cpus, -1 none
  RecordText cpu_name, arch;
  double network_bits_per_s;
  Interconnect interconnect;
  double local_disk_bytes;
  RecordText local_disk_type;
  RecordSpan regions;  // of CatalogRecords::region_prices
  RecordText source, shape_source;
};

struct EfficiencyRecord {
  RecordText parameter, stack, group;
  double value;
  RecordText fitted_to, source;
};

struct RenderScoreRecord {
  int gpu;  // index into CatalogRecords::accelerators
  RecordText backend;
  double samples_per_minute;
  RecordText source;
};

struct EncoderRateRecord {
  RecordText architecture, codec, resolution;
  double fps;
  int streams_per_engine;
  RecordText source;
};

struct SpotProfileRecord {
  RecordText provider;
  std::optional<double> interruptions_per_month, restart_minutes, notice_seconds;
  RecordText source;
};

struct EgressPriceRecord {
  RecordText provider, destination;
  std::optional<double> usd_per_gb;
  double free_gb_per_month;
  RecordText source, as_of;
};

struct StoragePriceRecord {
  RecordText provider, storage_class;
  std::optional<double> usd_per_gb_month;
  RecordText source, as_of;
};

struct LicencePriceRecord {
  RecordText licence, provider, unit;
  std::optional<double> usd;
  RecordText source, notes;
};

struct BillingRuleRecord {
  RecordText provider;
  double increment_s, minimum_s;
  RecordText source;
};

struct SpotRateRecord {
  RecordText provider, gpu, band;
  double interruptions_per_month;
  RecordText source, as_of;
  bool assumed;
};

struct StreamBitrateRecord {
  RecordText codec;
  double mbps_1080p60;
  RecordText source;
};

// One entry of a name index: a normalized name and the row it names. In key order.
struct IndexRecord {
  RecordText key;
  uint32_t row;
};

// A reference table (reference_tables.h) split into fields at build time.
struct TableRecord {
  RecordText name;    // "recipes.csv"
  RecordSpan header;  // of CatalogRecords::cells
  RecordSpan cells;   // the rows' fields, row after row, each as wide as the header
  RecordSpan lines;   // of CatalogRecords::lines: where each row starts in the file
};

struct CatalogRecords {
  const char* text;  // every RecordText's bytes, each distinct text once
  std::string_view Text(RecordText t) const { return {text + t.offset, t.size}; }
  RecordTable<RecordText> strings;  // alias lists
  RecordTable<AcceleratorRecord> accelerators;
  RecordTable<CpuRecord> cpus;
  RecordTable<CurrencyRecord> currencies;
  RecordTable<OperatorRecord> operators;
  RecordTable<ModelRecord> models;
  RecordTable<RegionPriceRecord> region_prices;
  RecordTable<InstanceRecord> instances;
  RecordTable<EfficiencyRecord> efficiency;
  RecordTable<RenderScoreRecord> render_scores;
  RecordTable<EncoderRateRecord> encoder_rates;
  RecordTable<SpotProfileRecord> spot_profiles;
  // The name indexes (CatalogBuilder::IndexesOf).
  RecordTable<IndexRecord> accelerator_index, cpu_index, model_index, instance_index;
  // The cost tables (costs/), read against this catalog.
  RecordTable<EgressPriceRecord> egress;
  RecordTable<StoragePriceRecord> storage;
  RecordTable<LicencePriceRecord> licences;
  RecordTable<BillingRuleRecord> billing;
  RecordTable<SpotRateRecord> spot_rates;
  RecordTable<StreamBitrateRecord> bitrates;
  // The reference tables.
  RecordTable<TableRecord> tables;
  RecordTable<RecordText> cells;
  RecordTable<int> lines;
};

// The records of data/ (generated at build time: built_in_catalog_records.cc).
extern const CatalogRecords kBuiltInCatalogRecords;

}  // namespace cloudfit

#endif  // CLOUDFIT_CATALOG_CATALOG_RECORDS_H_

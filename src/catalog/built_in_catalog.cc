// The built-in catalog: data/ as records compiled into the binary (catalog_records.h), turned
// into the catalog's tables without parsing or checking anything again. The build ran the
// ordinary loaders over data/ (catalog_compiler.cc), so a bad data file failed the build with
// the loader's message, and what is copied here is exactly what they produced. Long texts
// (sources, notes) are not copied: the rows' SharedText fields view the records' bytes. The
// instance types and models are made when first asked for (Catalog::instances, models).
#include <cstdlib>

#include "catalog/catalog_builder.h"
#include "catalog/catalog_records.h"
#include "cloudfit/cost_tables.h"
#include "util/csv.h"

namespace cloudfit {

namespace {

std::string Text(const CatalogRecords& records, RecordText text) {
  return std::string(records.Text(text));
}

// A view of the records' bytes, which live as long as the program.
SharedText Shared(const CatalogRecords& records, RecordText text) {
  return SharedText::Static(records.Text(text));
}

std::vector<std::string> Texts(const CatalogRecords& records, RecordSpan span) {
  std::vector<std::string> out;
  out.reserve(span.count);
  for (uint32_t i = span.first; i < span.first + span.count; ++i) {
    out.emplace_back(records.Text(records.strings[i]));
  }
  return out;
}

Accelerator MakeAccelerator(const CatalogRecords& records, const AcceleratorRecord& r) {
  Accelerator a;
  a.name = Text(records, r.name);
  a.vendor = Text(records, r.vendor);
  a.aliases = Texts(records, r.aliases);
  a.architecture = Text(records, r.architecture);
  a.compute_capability = Text(records, r.compute_capability);
  a.form_factor = Text(records, r.form_factor);
  a.memory_bytes = r.memory_bytes;
  a.memory_type = Text(records, r.memory_type);
  a.memory_bandwidth_bytes_per_s = r.memory_bandwidth_bytes_per_s;
  a.peak_flops = r.peak_flops;
  a.sm_count = r.sm_count;
  a.peak_clock_mhz = r.peak_clock_mhz;
  a.sustained_clock_mhz = r.sustained_clock_mhz;
  a.fp16_acc16_flops = r.fp16_acc16_flops;
  a.l2_cache_bytes = r.l2_cache_bytes;
  a.measured_bandwidth_bytes_per_s = r.measured_bandwidth_bytes_per_s;
  a.measured_gemm_fp16_flops = r.measured_gemm_fp16_flops;
  a.measured_gemm_tf32_flops = r.measured_gemm_tf32_flops;
  a.measured_gemm_fp8_flops = r.measured_gemm_fp8_flops;
  a.physics_source = Shared(records, r.physics_source);
  a.nvlink_bytes_per_s = r.nvlink_bytes_per_s;
  a.pcie_gen = r.pcie_gen;
  a.tdp_w = r.tdp_w;
  a.rt_cores = r.rt_cores;
  a.nvenc = r.nvenc;
  a.av1_encode = r.av1_encode;
  a.vgpu = r.vgpu;
  a.launch_year = r.launch_year;
  a.source = Shared(records, r.source);
  a.as_of = Text(records, r.as_of);
  a.notes = Shared(records, r.notes);
  return a;
}

CpuGeneration MakeCpu(const CatalogRecords& records, const CpuRecord& r) {
  CpuGeneration c;
  c.name = Text(records, r.name);
  c.vendor = Text(records, r.vendor);
  c.aliases = Texts(records, r.aliases);
  c.arch = Text(records, r.arch);
  c.isa = Text(records, r.isa);
  c.sustained_hz = r.sustained_hz;
  c.threads_per_core = r.threads_per_core;
  c.fp32_flops_per_vcpu = r.fp32_flops_per_vcpu;
  c.bf16_flops_per_vcpu = r.bf16_flops_per_vcpu;
  c.int8_ops_per_vcpu = r.int8_ops_per_vcpu;
  c.cores_per_socket = r.cores_per_socket;
  c.memory_channels = r.memory_channels;
  c.memory_type = Text(records, r.memory_type);
  c.memory_bandwidth_bytes_per_s_per_socket = r.memory_bandwidth_bytes_per_s_per_socket;
  c.launch_year = r.launch_year;
  c.source = Shared(records, r.source);
  c.as_of = Text(records, r.as_of);
  return c;
}

Operator MakeOperator(const CatalogRecords& records, const OperatorRecord& r) {
  Operator op;
  op.label = Text(records, r.label);
  op.kind = r.kind;
  op.m = r.m;
  op.n = r.n;
  op.k = r.k;
  op.groups = r.groups;
  op.repeats = r.repeats;
  op.read_elements = r.read_elements;
  op.written_elements = r.written_elements;
  op.when = r.when;
  op.spatial = r.spatial;
  op.trainable = r.trainable;
  op.causal = r.causal;
  op.in_place = r.in_place;
  op.freed = r.freed;
  op.saved_index_bytes = r.saved_index_bytes;
  op.source = Shared(records, r.source);
  return op;
}

Model MakeModel(const CatalogRecords& records, const ModelRecord& r) {
  Model m;
  m.name = Text(records, r.name);
  m.aliases = Texts(records, r.aliases);
  m.family = Text(records, r.family);
  m.params = r.params;
  m.active_params = r.active_params;
  m.layers = r.layers;
  m.hidden = r.hidden;
  m.heads = r.heads;
  m.kv_heads = r.kv_heads;
  m.ffn_hidden = r.ffn_hidden;
  m.vocab = r.vocab;
  m.context = r.context;
  m.experts = r.experts;
  m.experts_per_token = r.experts_per_token;
  m.tied_embeddings = r.tied_embeddings;
  m.gflops_per_sample = r.gflops_per_sample;
  m.resolution = r.resolution;
  m.compute_class = Text(records, r.compute_class);
  // The operators are added on first use (AddOperators).
  m.source = Shared(records, r.source);
  m.as_of = Text(records, r.as_of);
  m.notes = Shared(records, r.notes);
  return m;
}

void AddOperators(const CatalogRecords& records, const ModelRecord& r, Model* m) {
  m->operators.reserve(r.operators.count);
  for (uint32_t i = r.operators.first; i < r.operators.first + r.operators.count; ++i) {
    m->operators.push_back(MakeOperator(records, records.operators[i]));
  }
}

RegionPrice MakeRegionPrice(const CatalogRecords& records, const RegionPriceRecord& r) {
  RegionPrice p;
  p.region = Text(records, r.region);
  p.per_hour = r.per_hour;
  p.currency = Text(records, r.currency);
  p.as_of_days = r.as_of_days;
  p.source = Shared(records, r.source);
  p.notes = Shared(records, r.notes);
  p.lowest_over_regions_modes = r.lowest_over_regions_modes;
  return p;
}

InstanceType MakeInstance(const CatalogRecords& records, const Catalog& catalog,
                          const InstanceRecord& r) {
  InstanceType t;
  t.provider = Text(records, r.provider);
  t.name = Text(records, r.name);
  t.family = Text(records, r.family);
  t.gpu = r.gpu < 0 ? nullptr : &catalog.accelerators()[static_cast<size_t>(r.gpu)];
  t.gpu_count = r.gpu_count;
  t.gpu_memory_bytes = r.gpu_memory_bytes;
  t.vcpus = r.vcpus;
  t.memory_bytes = r.memory_bytes;
  t.cpu = r.cpu < 0 ? nullptr : &catalog.cpus()[static_cast<size_t>(r.cpu)];
  t.cpu_name = Text(records, r.cpu_name);
  t.arch = Text(records, r.arch);
  t.network_bits_per_s = r.network_bits_per_s;
  t.interconnect = r.interconnect;
  t.local_disk_bytes = r.local_disk_bytes;
  t.local_disk_type = Text(records, r.local_disk_type);
  t.regions.reserve(r.regions.count);
  for (uint32_t i = r.regions.first; i < r.regions.first + r.regions.count; ++i) {
    t.regions.push_back(MakeRegionPrice(records, records.region_prices[i]));
  }
  t.source = Shared(records, r.source);
  t.shape_source = Shared(records, r.shape_source);
  return t;
}

// The tables of `records` made with `make` (one argument: a record).
template <typename Row, typename Record, typename Make>
std::vector<Row> MakeAll(const RecordTable<Record>& table, Make make) {
  std::vector<Row> rows;
  rows.reserve(table.size);
  for (const Record& r : table) rows.push_back(make(r));
  return rows;
}

Status CostTablesFromRecords(const CatalogRecords& records, CostTables* out) {
  out->egress = MakeAll<EgressPrice>(records.egress, [&](const EgressPriceRecord& r) {
    return EgressPrice{
        Text(records, r.provider), Text(records, r.destination), r.usd_per_gb,
        r.free_gb_per_month,       Text(records, r.source),      Text(records, r.as_of)};
  });
  out->storage = MakeAll<StoragePrice>(records.storage, [&](const StoragePriceRecord& r) {
    return StoragePrice{Text(records, r.provider), Text(records, r.storage_class),
                        r.usd_per_gb_month, Text(records, r.source), Text(records, r.as_of)};
  });
  out->licences = MakeAll<LicencePrice>(records.licences, [&](const LicencePriceRecord& r) {
    return LicencePrice{Text(records, r.licence), Text(records, r.provider),
                        Text(records, r.unit),    r.usd,
                        Text(records, r.source),  Text(records, r.notes)};
  });
  out->billing = MakeAll<BillingRule>(records.billing, [&](const BillingRuleRecord& r) {
    return BillingRule{Text(records, r.provider), r.increment_s, r.minimum_s,
                       Text(records, r.source)};
  });
  out->spot_rates = MakeAll<SpotRate>(records.spot_rates, [&](const SpotRateRecord& r) {
    return SpotRate{Text(records, r.provider),
                    Text(records, r.gpu),
                    Text(records, r.band),
                    r.interruptions_per_month,
                    Text(records, r.source),
                    Text(records, r.as_of),
                    r.assumed};
  });
  out->bitrates = MakeAll<StreamBitrate>(records.bitrates, [&](const StreamBitrateRecord& r) {
    return StreamBitrate{Text(records, r.codec), r.mbps_1080p60, Text(records, r.source)};
  });
  return Status::OK();
}

// A reference table as the build split it: views of the records' constant text.
bool TableFromRecords(const CatalogRecords& records, const std::string& name, CsvTable* out) {
  for (const TableRecord& t : records.tables) {
    if (records.Text(t.name) != name) continue;
    out->path = "data/" + name;
    for (uint32_t i = 0; i < t.header.count; ++i) {
      std::string column(records.Text(records.cells[t.header.first + i]));
      out->column_index.emplace(column, static_cast<int>(i));
      out->header.push_back(std::move(column));
    }
    out->rows.resize(t.lines.count);
    for (uint32_t r = 0; r < t.lines.count; ++r) {
      const RecordText* first = &records.cells[t.cells.first + r * t.header.count];
      out->rows[r].line = records.lines[t.lines.first + r];
      out->rows[r].fields.reserve(t.header.count);
      for (uint32_t i = 0; i < t.header.count; ++i) {
        out->rows[r].fields.push_back(records.Text(first[i]));
      }
    }
    return true;
  }
  return false;
}

}  // namespace

Status CatalogBuilder::FromRecords(const CatalogRecords& records, Catalog* out) {
  Catalog c;
  c.built_in_ = true;
  c.origin_ = "built-in";
  c.accelerators_ = MakeAll<Accelerator>(records.accelerators, [&](const AcceleratorRecord& r) {
    return MakeAccelerator(records, r);
  });
  c.cpus_ =
      MakeAll<CpuGeneration>(records.cpus, [&](const CpuRecord& r) { return MakeCpu(records, r); });
  c.currencies_ = MakeAll<CurrencyRate>(records.currencies, [&](const CurrencyRecord& r) {
    return CurrencyRate{Text(records, r.currency), r.usd_per_unit, Text(records, r.as_of),
                        Text(records, r.source)};
  });
  c.efficiency_ =
      EfficiencyTable(MakeAll<EfficiencyFactor>(records.efficiency, [&](const EfficiencyRecord& r) {
        return EfficiencyFactor{Text(records, r.parameter), Text(records, r.stack),
                                Text(records, r.group),     r.value,
                                Text(records, r.fitted_to), Text(records, r.source)};
      }));
  c.render_scores_ = MakeAll<RenderScore>(records.render_scores, [&](const RenderScoreRecord& r) {
    return RenderScore{&c.accelerators_[static_cast<size_t>(r.gpu)], Text(records, r.backend),
                       r.samples_per_minute, Text(records, r.source)};
  });
  c.encoder_rates_ = MakeAll<EncoderRate>(records.encoder_rates, [&](const EncoderRateRecord& r) {
    return EncoderRate{Text(records, r.architecture), Text(records, r.codec),
                       Text(records, r.resolution),   r.fps,
                       r.streams_per_engine,          Text(records, r.source)};
  });
  c.spot_profiles_ = MakeAll<SpotProfile>(records.spot_profiles, [&](const SpotProfileRecord& r) {
    return SpotProfile{Text(records, r.provider), r.interruptions_per_month, r.restart_minutes,
                       r.notice_seconds, Text(records, r.source)};
  });
  // The indexes come in key order: each key goes in at the end.
  auto index = [&records](const RecordTable<IndexRecord>& entries, const auto& rows, auto* map) {
    for (const IndexRecord& e : entries) {
      map->emplace_hint(map->end(), records.Text(e.key), &rows[e.row]);
    }
  };
  index(records.accelerator_index, c.accelerators_, &c.accelerator_index_);
  index(records.cpu_index, c.cpus_, &c.cpu_index_);
  c.lazy_->models.make = [&records, index](const Catalog& catalog) {
    catalog.models_ =
        MakeAll<Model>(records.models, [&](const ModelRecord& r) { return MakeModel(records, r); });
    index(records.model_index, catalog.models_, &catalog.model_index_);
  };
  c.lazy_->operators_once = std::make_unique<std::once_flag[]>(records.models.size);
  c.lazy_->add_operators = [&records](const Catalog& catalog, size_t model) {
    AddOperators(records, records.models[model], &catalog.models_[model]);
  };
  c.lazy_->instances.make = [&records, index](const Catalog& catalog) {
    catalog.instances_ = MakeAll<InstanceType>(records.instances, [&](const InstanceRecord& r) {
      return MakeInstance(records, catalog, r);
    });
    index(records.instance_index, catalog.instances_, &catalog.instance_index_);
  };
  c.lazy_->read_costs = [&records](const Catalog&, CostTables* tables) {
    return CostTablesFromRecords(records, tables);
  };
  c.lazy_->compiled_table = [&records](const std::string& name, CsvTable* table) {
    return TableFromRecords(records, name, table);
  };
  *out = std::move(c);
  return Status::OK();
}

Status Catalog::LoadBuiltIn(Catalog* out) {
  return CatalogBuilder::FromRecords(kBuiltInCatalogRecords, out);
}

Status Catalog::LoadDefault(const std::string& dir, Catalog* out) {
  if (!dir.empty()) return LoadDirectory(dir, out);
  if (const char* env = std::getenv(kCatalogEnvVar); env != nullptr && *env != '\0') {
    return LoadDirectory(env, out);
  }
  return LoadBuiltIn(out);
}

}  // namespace cloudfit

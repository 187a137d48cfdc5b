// Loads data/serving_engines.csv into engine profiles and resolves engine names.
#include "cloudfit/serving_engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <mutex>

#include "catalog/reference_tables.h"
#include "cloudfit/catalog.h"
#include "cloudfit/workload.h"
#include "util/csv.h"
#include "util/strings.h"
#include "util/validate.h"

namespace cloudfit {

namespace {

constexpr const char* kEnginesFile = "serving_engines.csv";

Status ParseRow(const CsvTable& table, const CsvRow& row, ServingEngineProfile* p) {
  CsvRowReader r(table, row);
  p->name = r.RequiredText("engine");
  for (std::string& a : SplitList(r.Text("aliases"), '|')) p->aliases.push_back(std::move(a));
  std::string batching = ToLower(r.RequiredText("batching"));
  if (batching == "single")
    p->batching = BatchingPolicy::kSingle;
  else if (batching == "static")
    p->batching = BatchingPolicy::kStatic;
  else if (batching == "continuous")
    p->batching = BatchingPolicy::kContinuous;
  else if (r.status().ok())
    r.Fail("batching", fmt::format("'{}': single, static or continuous", Shown(batching)));
  std::string kv = ToLower(r.RequiredText("kv_allocation"));
  if (kv != "paged" && kv != "contiguous" && r.status().ok()) {
    r.Fail("kv_allocation", fmt::format("'{}': paged or contiguous", Shown(kv)));
  }
  p->paged_kv = kv == "paged";
  p->max_batch = static_cast<int>(r.Number("max_batch", 1, 1 << 20));
  p->max_batch_large_gpu =
      static_cast<int>(r.OptionalNumber("max_batch_large_gpu", 1, 1 << 20).value_or(0));
  p->prefill_chunk_tokens = static_cast<int>(r.Number("prefill_chunk_tokens", 16, 1 << 24));
  p->prefill_chunk_tokens_large_gpu =
      static_cast<int>(r.OptionalNumber("prefill_chunk_tokens_large_gpu", 16, 1 << 24).value_or(0));
  p->large_gpu_memory_gib = r.OptionalNumber("large_gpu_memory_gib", 1, 1e6).value_or(0);
  p->large_gpu_excludes = std::string(r.Text("large_gpu_excludes"));
  p->memory_utilization = r.Number("memory_utilization", 0.05, 1);
  std::string of = ToLower(r.RequiredText("memory_utilization_of"));
  if (of != "total" && of != "free" && r.status().ok()) {
    r.Fail("memory_utilization_of", fmt::format("'{}': total or free", Shown(of)));
  }
  p->memory_share_of_free = of == "free";
  for (std::string& d : SplitList(r.RequiredText("kv_cache_dtypes"), '|')) {
    std::string name = ToLower(d);
    if (KvCacheBytesPerElement(name, 2) <= 0 && r.status().ok()) {
      r.Fail("kv_cache_dtypes",
             fmt::format("'{}': auto, fp16, bf16, fp8, int8, q8_0 or q4_0", Shown(name)));
    }
    p->kv_cache_dtypes.push_back(name);
  }
  for (const std::string& mode : SplitList(r.RequiredText("multi_gpu"), '|')) {
    std::string m = ToLower(mode);
    if (m == "tensor")
      p->tensor_parallel = true;
    else if (m == "pipeline")
      p->pipeline_parallel = true;
    else if (m == "layers")
      p->layer_split = true;
    else if (r.status().ok())
      r.Fail("multi_gpu", fmt::format("'{}': tensor, pipeline or layers", Shown(m)));
  }
  p->decode_bandwidth_efficiency = r.OptionalNumber("decode_bandwidth_efficiency", 0.01, 1);
  p->prefill_compute_efficiency = r.OptionalNumber("prefill_compute_efficiency", 0.01, 1);
  p->step_overhead_s = r.Number("step_overhead_ms", 0, 1000) * 1e-3;
  p->as_of = r.RequiredText("as_of");
  p->source = r.RequiredText("source");
  p->notes = std::string(r.Text("notes"));
  return r.status();
}

// A catalog's engines as parsed, with each one's name and aliases normalized for lookups.
struct ParsedEngines {
  std::vector<ServingEngineProfile> engines;
  std::vector<std::vector<std::string>> keys;
};

Status ParseEngines(const CsvTable& file, ParsedEngines* out) {
  Status s =
      file.RequireColumns({"engine", "aliases", "batching", "kv_allocation", "max_batch",
                           "prefill_chunk_tokens", "memory_utilization", "memory_utilization_of",
                           "kv_cache_dtypes", "multi_gpu", "step_overhead_ms", "as_of", "source"});
  if (!s.ok()) return s;
  for (const CsvRow& row : file.rows) {
    ServingEngineProfile p;
    s = ParseRow(file, row, &p);
    if (!s.ok()) return s;
    std::vector<std::string> keys = {NormalizeName(p.name)};
    for (const std::string& a : p.aliases) keys.push_back(NormalizeName(a));
    out->engines.push_back(std::move(p));
    out->keys.push_back(std::move(keys));
  }
  if (out->engines.empty()) return Status::Corruption(file.path + ": no engines");
  return Status::OK();
}

// The engines of the catalog's table, parsed once per table: every serving and inference
// workload resolves its engine (thousands a second from a batch or a server) and a catalog's
// tables never change. The last table parsed is remembered by a weak pointer, so a table freed
// and another made at its address are never mistaken for each other.
Status EnginesOf(const Catalog& catalog, std::shared_ptr<const ParsedEngines>* out) {
  // The catalog's copy, or the built-in one for a catalog directory written before engines
  // were data.
  std::shared_ptr<const CsvTable> file;
  Status s = ReadReferenceTable(catalog, kEnginesFile, &file);
  if (s.code() == Status::Code::kNotFound) {
    return Status::Corruption(std::string("the catalog has no ") + kEnginesFile);
  }
  if (!s.ok()) return s;
  static std::mutex mutex;
  static std::weak_ptr<const CsvTable> parsed_from;
  static std::shared_ptr<const ParsedEngines> parsed;
  std::lock_guard<std::mutex> lock(mutex);
  if (parsed && parsed_from.lock() == file) {
    *out = parsed;
    return Status::OK();
  }
  auto made = std::make_shared<ParsedEngines>();
  s = ParseEngines(*file, made.get());
  if (!s.ok()) return s;
  parsed_from = file;
  parsed = made;
  *out = std::move(made);
  return Status::OK();
}

}  // namespace

Status LoadServingEngines(const Catalog& catalog, std::vector<ServingEngineProfile>* out) {
  std::shared_ptr<const ParsedEngines> parsed;
  Status s = EnginesOf(catalog, &parsed);
  if (!s.ok()) return s;
  out->insert(out->end(), parsed->engines.begin(), parsed->engines.end());
  return Status::OK();
}

Status FindServingEngine(const Catalog& catalog, std::string_view name, ServingEngineProfile* out) {
  std::shared_ptr<const ParsedEngines> parsed;
  Status s = EnginesOf(catalog, &parsed);
  if (!s.ok()) return s;
  std::string key = NormalizeName(name);
  std::vector<std::string> names;
  for (size_t i = 0; i < parsed->engines.size(); ++i) {
    const std::vector<std::string>& keys = parsed->keys[i];
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) {
      *out = parsed->engines[i];
      return Status::OK();
    }
    names.push_back(parsed->engines[i].name);
  }
  return Status::NotFound(
      fmt::format("unknown serving engine '{}'; known: {}", Shown(name), Join(names, ", ")));
}

double KvCacheBytesPerElement(std::string_view dtype, double auto_bytes) {
  std::string d = ToLower(dtype);
  if (d == "auto") return auto_bytes;
  if (d == "fp16" || d == "f16" || d == "bf16" || d == "float16" || d == "bfloat16") return 2;
  if (d == "fp8" || d == "fp8_e4m3" || d == "fp8_e5m2" || d == "int8") return 1;
  // llama.cpp block formats: 32 values share one fp16 scale (q8_0: 34 bytes per 32 values,
  // q4_0: 18 bytes per 32), ggml-common.h block_q8_0 and block_q4_0.
  if (d == "q8_0") return 34.0 / 32;
  if (d == "q4_0") return 18.0 / 32;
  return 0;
}

Status ResolveServingEngine(const Catalog& catalog, Workload* w) {
  Status s = FindServingEngine(catalog, w->engine, &w->engine_profile);
  if (!s.ok()) return Status::InvalidArgument("engine: " + s.message());
  const ServingEngineProfile& p = w->engine_profile;
  if (w->kv_cache_dtype != "auto") {
    bool offered = false;
    for (const std::string& d : p.kv_cache_dtypes) offered |= d == w->kv_cache_dtype;
    if (!offered) {
      return Status::InvalidArgument(
          fmt::format("kv_cache_dtype: {} does not offer '{}'; it offers {}", p.name,
                      w->kv_cache_dtype, Join(p.kv_cache_dtypes, ", ")));
    }
  }
  if (w->tensor_parallel > 1 && w->pipeline_parallel > 1) {
    return Status::InvalidArgument(
        "tp: tensor and pipeline parallel at once are not modelled for serving; give one of tp "
        "and pp above 1");
  }
  if (w->tensor_parallel > 1 && !p.tensor_parallel) {
    return Status::InvalidArgument(fmt::format(
        "tp: {} splits whole layers over GPUs, not tensors; leave tp on auto or use pp", p.name));
  }
  if (w->pipeline_parallel > 1 && !p.pipeline_parallel && !p.layer_split) {
    return Status::InvalidArgument(fmt::format("pp: {} has no pipeline or layer split", p.name));
  }
  if (w->layer_split && !p.layer_split && !p.pipeline_parallel) {
    return Status::InvalidArgument(
        fmt::format("multi_gpu: {} cannot split layers over GPUs", p.name));
  }
  return Status::OK();
}

std::string_view BatchingPolicyName(BatchingPolicy policy) {
  switch (policy) {
    case BatchingPolicy::kSingle:
      return "one request at a time";
    case BatchingPolicy::kStatic:
      return "static batching";
    case BatchingPolicy::kContinuous:
      return "continuous batching";
  }
  return "";
}

}  // namespace cloudfit

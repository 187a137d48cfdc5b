// Serving engines as data (data/serving_engines.csv): how an engine batches requests, allocates
// the KV cache, splits a model over GPUs, and what its kernels reach. A workload names an engine
// (`engine: vllm`); FinalizeWorkload resolves the name to its profile, and the serving estimate
// reads the profile instead of hard-coded defaults.
#ifndef CLOUDFIT_SERVING_ENGINE_H_
#define CLOUDFIT_SERVING_ENGINE_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cloudfit/status.h"

namespace cloudfit {

class Catalog;
struct Workload;

enum class BatchingPolicy {
  kSingle,      // one request at a time (llama.cpp with one slot)
  kStatic,      // request-level batches run to completion (Hugging Face generate)
  kContinuous,  // iteration-level scheduling, chunked prefill (vLLM, TensorRT-LLM)
};

struct ServingEngineProfile {
  std::string name;
  std::vector<std::string> aliases;
  BatchingPolicy batching = BatchingPolicy::kContinuous;
  bool paged_kv = true;  // KV blocks allocated as tokens arrive; else a whole context reserved
  int max_batch = 256;   // concurrent sequences (vLLM max_num_seqs, TensorRT-LLM max_batch_size)
  // On GPUs with at least `large_gpu_memory_gib` whose name does not contain `large_gpu_excludes`
  // (vLLM: H100-class, not A100), larger defaults apply; 0 = none.
  int max_batch_large_gpu = 0;
  int prefill_chunk_tokens = 2048;  // tokens one iteration carries (max_num_batched_tokens)
  int prefill_chunk_tokens_large_gpu = 0;
  double large_gpu_memory_gib = 0;
  std::string large_gpu_excludes;
  double memory_utilization = 0.9;    // share of device memory the engine claims
  bool memory_share_of_free = false;  // share of what weights leave (TensorRT-LLM), not of all
  std::vector<std::string> kv_cache_dtypes;  // accepted names; the first is the default
  bool tensor_parallel = false;
  bool pipeline_parallel = false;
  bool layer_split = false;  // whole layers per GPU run in turn, no overlap (llama.cpp)
  // Kernel efficiencies of the engine; empty = the fitted data/efficiency.csv rows.
  std::optional<double> decode_bandwidth_efficiency;
  std::optional<double> prefill_compute_efficiency;
  double step_overhead_s = 0;  // per iteration, outside the GPU kernels
  std::string as_of;
  std::string source;
  std::string notes;
};

// The profiles of the catalog's serving_engines.csv (the built-in file when the catalog
// directory has none). Errors name the file, line and field.
Status LoadServingEngines(const Catalog& catalog, std::vector<ServingEngineProfile>* out);

// Finds an engine by name or alias, case-insensitively; NotFound lists the known engines.
Status FindServingEngine(const Catalog& catalog, std::string_view name,
                         ServingEngineProfile* out);

// Bytes per KV-cache element for a dtype name the profiles use: auto (`auto_bytes`, the
// model's activation format), fp16, bf16, fp8, int8, q8_0 (8.5 bits), q4_0 (4.5 bits).
// Returns 0 for an unknown name.
double KvCacheBytesPerElement(std::string_view dtype, double auto_bytes);

// Resolves `workload->engine` to its profile and checks the serving fields against it: an
// unknown engine, a KV-cache format or multi-GPU mode the engine lacks are errors naming the
// field. Called by FinalizeWorkload for serving and inference workloads.
Status ResolveServingEngine(const Catalog& catalog, Workload* workload);

std::string_view BatchingPolicyName(BatchingPolicy policy);

}  // namespace cloudfit

#endif  // CLOUDFIT_SERVING_ENGINE_H_

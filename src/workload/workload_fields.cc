// The workload's fields: each one's name, help and how a text value sets it, checked against
// what the field allows, in one table.
#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "cloudfit/workload.h"
#include "util/dtype_names.h"
#include "util/strings.h"
#include "util/validate.h"

namespace cloudfit {

namespace {

using Setter = std::function<Status(Workload*, const std::string& value)>;

struct FieldSpec {
  const char* name;
  const char* help;
  Setter set;
};

Status Bad(const std::string& field, const std::string& value, const std::string& allowed) {
  return Status::InvalidArgument(
      fmt::format("{}: '{}' is not allowed; {}", field, Shown(value), allowed));
}

// A number in [min, max]; NaN and infinities are refused by name (util/validate.h).
Setter Number(const char* field, double Workload::*member, double min, double max,
              const char* unit) {
  return [=](Workload* w, const std::string& value) {
    double v = 0;
    Status s = ParseNumber(field, value, min, max, unit, &v);
    if (s.ok()) w->*member = v;
    return s;
  };
}

Setter OptionalNumber(const char* field, std::optional<double> Workload::*member, double min,
                      double max, const char* unit, double scale = 1) {
  return [=](Workload* w, const std::string& value) {
    double v = 0;
    Status s = ParseNumber(field, value, min, max, unit, &v);
    if (s.ok()) w->*member = v * scale;
    return s;
  };
}

// A whole number in [min, max], range-checked before it is narrowed to int.
Setter Integer(const char* field, int Workload::*member, long long min, long long max,
               const char* what) {
  return [=](Workload* w, const std::string& value) {
    long long v = 0;
    Status s = ParseWholeNumber(field, value, min, max, what, &v);
    if (s.ok()) w->*member = static_cast<int>(v);
    return s;
  };
}

// "auto" or a whole number, for parallel sizes.
Setter AutoInteger(const char* field, int Workload::*member) {
  return [=](Workload* w, const std::string& value) {
    if (ToLower(value) == "auto") {
      w->*member = 0;
      return Status::OK();
    }
    long long v = 0;
    if (!ParseWholeNumber(field, value, 1, 4096, "", &v).ok()) {
      return Bad(field, value, "'auto' or a whole number in [1, 4096]");
    }
    w->*member = static_cast<int>(v);
    return Status::OK();
  };
}

bool ParseBool(const std::string& value, bool* out) {
  std::string v = ToLower(value);
  if (v == "true" || v == "yes" || v == "on" || v == "1")
    *out = true;
  else if (v == "false" || v == "no" || v == "off" || v == "0")
    *out = false;
  else
    return false;
  return true;
}

Setter Bool(const char* field, bool Workload::*member) {
  return [=](Workload* w, const std::string& value) {
    if (!ParseBool(value, &(w->*member))) return Bad(field, value, "true or false");
    return Status::OK();
  };
}

template <typename Enum>
Setter Choice(const char* field, Enum Workload::*member,
              std::vector<std::pair<const char*, Enum>> choices) {
  return [=](Workload* w, const std::string& value) {
    std::string key = NormalizeName(value);
    std::vector<std::string> names;
    for (const auto& [name, e] : choices) {
      if (NormalizeName(name) == key) {
        w->*member = e;
        return Status::OK();
      }
      names.push_back(name);
    }
    return Bad(field, value, "one of " + Join(names, ", "));
  };
}

// Reads framework spellings of a dtype (float16, bfloat16) as the short names.
Setter CanonicalDtype(Setter setter) {
  return [=](Workload* w, const std::string& value) {
    std::string canonical = CanonicalDtypeName(value);
    Status s = setter(w, canonical);
    return s.ok() ? s : setter(w, value);  // the error names the value as given
  };
}

// An architecture number over the model; `whole` for counts and widths, which become ints.
Setter Architecture(const char* field, double min, double max, bool whole = true) {
  return [=](Workload* w, const std::string& value) {
    double v = 0;
    Status s;
    if (whole) {
      long long n = 0;
      s = ParseWholeNumber(field, value, static_cast<long long>(min), static_cast<long long>(max),
                           "", &n);
      v = static_cast<double>(n);
    } else {
      s = ParseNumber(field, value, min, max, "", &v);
    }
    if (s.ok()) w->architecture_overrides[field] = v;
    return s;
  };
}

const std::vector<FieldSpec>& Specs() {
  static const std::vector<FieldSpec> specs = {
      {"kind",
       "train, lora, qlora, inference, serve, render, realtime, cad, preprocess, classic-ml",
       Choice<WorkloadKind>("kind", &Workload::kind,
                            {{"train", WorkloadKind::kTrain},
                             {"finetune", WorkloadKind::kTrain},
                             {"lora", WorkloadKind::kLora},
                             {"qlora", WorkloadKind::kQlora},
                             {"inference", WorkloadKind::kInference},
                             {"serve", WorkloadKind::kServing},
                             {"serving", WorkloadKind::kServing},
                             {"render", WorkloadKind::kRender},
                             {"realtime", WorkloadKind::kRealtimeRender},
                             {"cad", WorkloadKind::kCad},
                             {"preprocess", WorkloadKind::kPreprocess},
                             {"classic-ml", WorkloadKind::kClassicMl},
                             {"tabular", WorkloadKind::kClassicMl}})},
      {"model", "a model of the zoo (cloudfit models), by name or alias",
       [](Workload* w, const std::string& v) {
         if (Trim(v).empty()) return Bad("model", v, "a model name (see 'cloudfit models')");
         Status s = CheckName("model", v);
         if (s.ok()) w->model_name = v;
         return s;
       }},
      {"model_config",
       "a Hugging Face config.json: a path (command line), or the JSON object itself (inline)",
       [](Workload* w, const std::string& v) {
         // An object is the config itself; anything else names a file, which only the command
         // line reads (the HTTP API refuses paths before they get here).
         if (StartsWith(Trim(v), "{")) {
           nlohmann::json config;
           Status s = ParseJson("model_config", v, kMaxDocumentBytes, &config);
           if (!s.ok()) return s;
           w->model_config.clear();
           w->model_config_json = DumpJson(config);
           return Status::OK();
         }
         Status s = CheckText("model_config", v);
         if (s.ok() && Trim(v).empty()) s = Bad("model_config", v, "a path to a config.json");
         if (!s.ok()) return s;
         w->model_config = v;
         w->model_config_json.clear();
         return Status::OK();
       }},
      {"params_b", "parameters, billions (explicit architecture)", Architecture("params_b", 1e-6, 1e5, false)},
      {"layers", "transformer layers", Architecture("layers", 1, 10000)},
      {"hidden", "hidden size", Architecture("hidden", 1, 1e6)},
      {"heads", "attention heads", Architecture("heads", 1, 10000)},
      {"kv_heads", "key/value heads (grouped-query attention)", Architecture("kv_heads", 1, 10000)},
      {"ffn_hidden", "feed-forward hidden size", Architecture("ffn_hidden", 1, 1e7)},
      {"vocab", "vocabulary size", Architecture("vocab", 1, 1e8)},
      {"experts", "mixture-of-experts experts per layer", Architecture("experts", 1, 10000)},
      {"experts_per_token", "experts active per token", Architecture("experts_per_token", 1, 10000)},
      {"gflops_per_sample", "forward GFLOPs per sample (CNNs, diffusion)",
       Architecture("gflops_per_sample", 1e-9, 1e9, false)},
      {"precision",
       "fp32, tf32, fp16, bf16 (mixed precision when training), fp8, int8, int4; float16, "
       "bfloat16, float32 too",
       CanonicalDtype(Choice<NumericFormat>("precision", &Workload::precision,
                             {{"fp32", NumericFormat::kFp32},
                              {"tf32", NumericFormat::kTf32},
                              {"fp16", NumericFormat::kFp16},
                              {"bf16", NumericFormat::kBf16},
                              {"fp8", NumericFormat::kFp8},
                              {"int8", NumericFormat::kInt8},
                              {"int4", NumericFormat::kInt4}}))},
      {"batch", "global batch, samples per optimizer step",
       Integer("batch", &Workload::global_batch, 1, 1000000000, "samples")},
      {"micro_batch", "samples per device per forward pass",
       Integer("micro_batch", &Workload::micro_batch, 1, 100000000, "samples")},
      {"seq_len", "tokens per sample", Integer("seq_len", &Workload::seq_len, 1, 10000000, "tokens")},
      {"resolution", "image side, pixels",
       Integer("resolution", &Workload::resolution, 8, 65536, "pixels")},
      {"tokens", "tokens to process", Number("tokens", &Workload::tokens, 1, 1e16, "tokens")},
      {"samples", "samples to process", Number("samples", &Workload::samples, 1, 1e14, "samples")},
      {"epochs", "passes over dataset_samples", Number("epochs", &Workload::epochs, 0.001, 1e6, "epochs")},
      {"dataset_samples", "samples in the dataset",
       Number("dataset_samples", &Workload::dataset_samples, 1, 1e14, "samples")},
      {"steps", "optimizer steps", Number("steps", &Workload::steps, 1, 1e10, "steps")},
      {"optimizer", "adamw, sgd, adafactor, adam8bit",
       Choice<Optimizer>("optimizer", &Workload::optimizer,
                         {{"adamw", Optimizer::kAdamW},
                          {"adam", Optimizer::kAdamW},
                          {"sgd", Optimizer::kSgdMomentum},
                          {"adafactor", Optimizer::kAdafactor},
                          {"adam8bit", Optimizer::kAdam8bit}})},
      {"master_weights", "true: fp32 master weights with 16-bit training (default); false: pure 16-bit",
       [](Workload* w, const std::string& v) {
         if (!ParseBool(v, &w->master_weights)) return Bad("master_weights", v, "true or false");
         return Status::OK();
       }},
      {"zero", "ZeRO stage 0-3 or auto",
       [](Workload* w, const std::string& v) {
         if (ToLower(v) == "auto") {
           w->zero_stage = -1;
           return Status::OK();
         }
         return Integer("zero", &Workload::zero_stage, 0, 3, "stage")(w, v);
       }},
      {"fsdp", "true: fully sharded data parallel (same memory as ZeRO-3)",
       [](Workload* w, const std::string& v) {
         bool b = false;
         if (!ParseBool(v, &b)) return Bad("fsdp", v, "true or false");
         if (b) w->zero_stage = 3;
         return Status::OK();
       }},
      {"tp", "tensor-parallel size or auto", AutoInteger("tp", &Workload::tensor_parallel)},
      {"pp", "pipeline-parallel size or auto", AutoInteger("pp", &Workload::pipeline_parallel)},
      {"recompute", "none, selective, full",
       Choice<Recompute>("recompute", &Workload::recompute,
                         {{"none", Recompute::kNone},
                          {"selective", Recompute::kSelective},
                          {"full", Recompute::kFull}})},
      {"flash_attention", "true or false",
       [](Workload* w, const std::string& v) {
         if (!ParseBool(v, &w->flash_attention)) return Bad("flash_attention", v, "true or false");
         return Status::OK();
       }},
      {"lora_rank", "LoRA rank", Integer("lora_rank", &Workload::lora_rank, 1, 4096, "rank")},
      {"lora_targets", "qv, attention, mlp, all (all linear layers)",
       Choice<LoraTargets>("lora_targets", &Workload::lora_targets,
                           {{"qv", LoraTargets::kQueryValue},
                            {"attention", LoraTargets::kAttention},
                            {"mlp", LoraTargets::kMlp},
                            {"all", LoraTargets::kAllLinear}})},
      {"optimizer_in_backward",
       "true: apply each gradient during backward and free it (torchtune optimizer_in_bwd)",
       Bool("optimizer_in_backward", &Workload::optimizer_in_backward)},
      {"paged_optimizer", "true: bitsandbytes paged optimizer states, spilled to host memory "
                          "when the GPU runs short",
       Bool("paged_optimizer", &Workload::paged_optimizer)},
      {"cross_entropy", "standard (all logits plus an fp32 copy), chunked (fp32 a chunk at a "
                        "time, torchtune), fused (projection fused with the loss, Liger)",
       Choice<CrossEntropy>("cross_entropy", &Workload::cross_entropy,
                            {{"standard", CrossEntropy::kStandard},
                             {"chunked", CrossEntropy::kChunked},
                             {"fused", CrossEntropy::kFused}})},
      {"loss_chunks", "chunks of the chunked cross-entropy",
       Integer("loss_chunks", &Workload::loss_chunks, 1, 4096, "chunks")},
      {"activation_offload", "true: saved activations live in host memory (torchtune)",
       Bool("activation_offload", &Workload::activation_offload)},
      {"optimizer_offload", "true: optimizer state and master weights on the CPU (ZeRO-Offload, "
                            "FSDP CPU offload)",
       Bool("optimizer_offload", &Workload::optimizer_offload)},
      {"software", "pytorch, llama.cpp, vllm, tensorrt-llm (whose kernel efficiencies apply)",
       [](Workload* w, const std::string& v) {
         std::string k = ToLower(v);
         if (k != "pytorch" && k != "llama.cpp" && k != "vllm" && k != "tensorrt-llm") {
           return Bad("software", v, "one of pytorch, llama.cpp, vllm, tensorrt-llm");
         }
         w->software = k;
         return Status::OK();
       }},
      {"request_rate", "requests per second",
       Number("request_rate", &Workload::request_rate, 1e-6, 1e7, "requests/s")},
      {"prompt_tokens", "prompt tokens per request",
       Integer("prompt_tokens", &Workload::prompt_tokens, 1, 10000000, "tokens")},
      {"output_tokens", "generated tokens per request",
       Integer("output_tokens", &Workload::output_tokens, 1, 10000000, "tokens")},
      {"ttft_target_ms", "time-to-first-token target, ms",
       OptionalNumber("ttft_target_ms", &Workload::ttft_target_s, 0.01, 3.6e6, "ms", 1e-3)},
      {"tpot_target_ms", "time-per-output-token target, ms",
       OptionalNumber("tpot_target_ms", &Workload::tpot_target_s, 0.01, 3.6e6, "ms", 1e-3)},
      {"engine", "serving engine: vllm (default), tensorrt-llm, llama.cpp, static (data/serving_engines.csv)",
       [](Workload* w, const std::string& v) {
         if (v.empty()) return Bad("engine", v, "an engine name such as vllm or llama.cpp");
         w->engine = v;  // resolved against the catalog by FinalizeWorkload
         return Status::OK();
       }},
      {"gpu_memory_utilization", "share of device memory the engine claims for weights and KV cache",
       OptionalNumber("gpu_memory_utilization", &Workload::gpu_memory_utilization, 0.05, 1, "(a share)")},
      {"kv_cache_dtype", "KV cache format: auto, fp16, bf16, fp8, int8, q8_0, q4_0 (as the engine allows)",
       [](Workload* w, const std::string& v) {
         if (KvCacheBytesPerElement(v, 2) <= 0) {
           return Bad("kv_cache_dtype", v, "one of auto, fp16, bf16, fp8, int8, q8_0, q4_0");
         }
         // One name per format: vLLM's fp8_e4m3/fp8_e5m2 are fp8, llama.cpp's f16 is fp16.
         std::string d = ToLower(v);
         if (d.rfind("fp8", 0) == 0) d = "fp8";
         else if (d == "f16" || d == "float16" || d == "half") d = "fp16";
         else if (d == "bfloat16") d = "bf16";
         w->kv_cache_dtype = d;
         return Status::OK();
       }},
      {"max_batch", "concurrent sequences per model copy (max_num_seqs); 0 = the engine's default",
       Integer("max_batch", &Workload::max_batch, 0, 1 << 20, "sequences")},
      {"latency_percentile", "percentile the latency targets hold at: p50, p95 (default), p99",
       [](Workload* w, const std::string& v) {
         std::string k = ToLower(v);
         if (!k.empty() && k[0] == 'p') k = k.substr(1);
         double pct = 0;
         if (!ParseDouble(k, &pct) || (pct != 50 && pct != 90 && pct != 95 && pct != 99)) {
           return Bad("latency_percentile", v, "p50, p90, p95 or p99");
         }
         w->latency_percentile = pct / 100;
         return Status::OK();
       }},
      {"target_utilisation", "share of a replica's saturation throughput it is sized to run at (0.7)",
       Number("target_utilisation", &Workload::target_utilisation, 0.05, 0.95, "(a share)")},
      {"multi_gpu", "tensor (tensor parallel) or layers (layers split over GPUs, run in turn)",
       [](Workload* w, const std::string& v) {
         std::string k = ToLower(v);
         if (k != "tensor" && k != "layers") return Bad("multi_gpu", v, "tensor or layers");
         w->layer_split = k == "layers";
         return Status::OK();
       }},
      {"weight_bits", "bits per weight of a quantized format (e.g. 4.9 for GGUF Q4_K_M)",
       Number("weight_bits", &Workload::weight_bits, 1, 32, "bits")},
      {"diffusion_steps", "denoising steps per image",
       Integer("diffusion_steps", &Workload::diffusion_steps, 1, 10000, "steps")},
      {"frames", "frames to render", Number("frames", &Workload::frames, 1, 1e9, "frames")},
      {"seconds_per_frame", "render time per frame on reference_gpu, s",
       OptionalNumber("seconds_per_frame", &Workload::seconds_per_frame, 1e-4, 1e7, "s")},
      {"reference_gpu", "GPU the seconds_per_frame was measured on",
       [](Workload* w, const std::string& v) {
         Status s = CheckName("reference_gpu", v);
         if (s.ok()) w->reference_gpu = v;
         return s;
       }},
      {"benchmark_score", "reference Blender Open Data score, samples/min",
       OptionalNumber("benchmark_score", &Workload::benchmark_score, 1e-3, 1e8, "samples/min")},
      {"scene_memory_gib", "scene memory on the GPU, GiB",
       Number("scene_memory_gib", &Workload::scene_memory_gib, 0, 1e5, "GiB")},
      {"width", "stream width, pixels", Integer("width", &Workload::width, 16, 16384, "pixels")},
      {"height", "stream height, pixels", Integer("height", &Workload::height, 16, 16384, "pixels")},
      {"fps", "frames per second", Number("fps", &Workload::fps, 1, 1000, "frames/s")},
      {"streams", "simultaneous streams or sessions",
       Integer("streams", &Workload::streams, 1, 1000000, "streams")},
      {"codec", "h264, hevc, av1",
       [](Workload* w, const std::string& v) {
         std::string c = ToLower(v);
         if (c != "h264" && c != "hevc" && c != "av1") return Bad("codec", v, "h264, hevc or av1");
         w->codec = c;
         return Status::OK();
       }},
      {"data_gb", "data to preprocess, GB", Number("data_gb", &Workload::data_gb, 1e-6, 1e9, "GB")},
      {"per_core_mb_s", "preprocessing throughput of one vCPU, MB/s",
       Number("per_core_mb_s", &Workload::per_core_mb_s, 1e-3, 1e5, "MB/s")},
      {"loader_samples_per_core_s", "input pipeline samples/s of one vCPU",
       OptionalNumber("loader_samples_per_core_s", &Workload::loader_samples_per_core_s, 1e-3, 1e9,
                      "samples/s")},
      {"storage_gb_s", "storage or object-store read rate, GB/s",
       OptionalNumber("storage_gb_s", &Workload::storage_gb_s, 1e-6, 1e5, "GB/s")},
      {"data_type", "image, text, audio, video, tabular or none (what the input pipeline reads)",
       Choice<DataType>("data_type", &Workload::data_type,
                        {{"image", DataType::kImage},
                         {"text", DataType::kText},
                         {"audio", DataType::kAudio},
                         {"video", DataType::kVideo},
                         {"tabular", DataType::kTabular},
                         {"none", DataType::kNone}})},
      // Classic ML.
      {"rows", "rows to train on or score (classic-ml)",
       Number("rows", &Workload::rows, 1, 1e13, "rows")},
      {"features", "features (columns) per row (classic-ml)",
       Number("features", &Workload::features, 1, 1e7, "features")},
      {"trees", "boosting rounds (classic-ml gbdt)",
       Integer("trees", &Workload::trees, 1, 1000000, "trees")},
      {"tree_depth", "maximum tree depth (classic-ml gbdt)",
       Integer("tree_depth", &Workload::tree_depth, 1, 64, "levels")},
      {"algorithm", "gbdt (XGBoost, LightGBM) or linear (scikit-learn linear models)",
       Choice<MlAlgorithm>("algorithm", &Workload::algorithm,
                           {{"gbdt", MlAlgorithm::kGbdt},
                            {"xgboost", MlAlgorithm::kGbdt},
                            {"lightgbm", MlAlgorithm::kGbdt},
                            {"linear", MlAlgorithm::kLinear}})},
      {"ml_task", "train or predict (classic-ml)",
       [](Workload* w, const std::string& v) {
         std::string k = ToLower(v);
         if (k != "train" && k != "predict") return Bad("ml_task", v, "train or predict");
         w->predict = k == "predict";
         return Status::OK();
       }},
      // Real-time and CAD sessions.
      {"session_profile", "real time: esports or aaa; cad: light, medium or heavy (data/sessions.csv)",
       [](Workload* w, const std::string& v) {
         if (Trim(v).empty()) return Bad("session_profile", v, "a profile of data/sessions.csv");
         w->session_profile = ToLower(v);
         return Status::OK();
       }},
      {"vcpus_per_session", "vCPUs each stream or seat needs",
       Number("vcpus_per_session", &Workload::vcpus_per_session, 0.1, 1024, "vCPUs")},
      {"ram_gib_per_session", "host RAM each stream or seat needs, GiB",
       Number("ram_gib_per_session", &Workload::ram_gib_per_session, 0.1, 4096, "GiB")},
      {"gpu_memory_gib_per_session", "GPU memory each stream or seat needs, GiB",
       Number("gpu_memory_gib_per_session", &Workload::gpu_memory_gib_per_session, 0.1, 1024,
              "GiB")},
      {"stream_mbps", "video bitrate of one stream, Mbit/s",
       Number("stream_mbps", &Workload::stream_mbps, 0.1, 10000, "Mbit/s")},
      // The whole job's bill.
      {"egress_gb", "data sent out of the cloud over the job (serving and streams: per month), GB",
       OptionalNumber("egress_gb", &Workload::egress_gb, 0, 1e9, "GB")},
      {"egress_to", "internet or region (another region of the same provider)",
       [](Workload* w, const std::string& v) {
         std::string k = ToLower(v);
         if (k != "internet" && k != "region") return Bad("egress_to", v, "internet or region");
         w->egress_to = k;
         return Status::OK();
       }},
      {"image_gb", "container image every node pulls at start-up, GB",
       OptionalNumber("image_gb", &Workload::image_gb, 0, 1000, "GB")},
      {"checkpoints_kept", "checkpoints kept in storage during the job",
       Integer("checkpoints_kept", &Workload::checkpoints_kept, 0, 1000, "checkpoints")},
      {"os", "linux or windows (Windows adds its licence to the bill)",
       Choice<OperatingSystem>("os", &Workload::os,
                               {{"linux", OperatingSystem::kLinux},
                                {"windows", OperatingSystem::kWindows}})},
  };
  return specs;
}

}  // namespace

const std::vector<WorkloadField>& WorkloadFields() {
  static const std::vector<WorkloadField> fields = [] {
    std::vector<WorkloadField> out;
    for (const FieldSpec& s : Specs()) out.push_back({s.name, s.help});
    return out;
  }();
  return fields;
}

Status SetWorkloadField(Workload* w, const std::string& name, const std::string& value) {
  std::string key = ToLower(Trim(name));
  for (char& c : key) {
    if (c == '-') c = '_';
  }
  for (const FieldSpec& s : Specs()) {
    if (key != s.name) continue;
    Status status = s.set(w, std::string(Trim(value)));
    if (status.ok()) w->given.insert(key);
    return status;
  }
  std::vector<std::string> names;
  for (const FieldSpec& s : Specs()) names.push_back(s.name);
  // Suggestions only for a name of a plausible length: edit distances cost its length squared.
  std::string suggestions =
      name.size() <= 64 ? DidYouMean(ClosestNames(name, names)) : std::string();
  return Status::InvalidArgument(
      fmt::format("unknown workload field '{}'{}", Shown(name), suggestions));
}

}  // namespace cloudfit

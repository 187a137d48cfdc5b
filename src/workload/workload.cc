#include "cloudfit/workload.h"

#include <cmath>
#include <functional>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "cloudfit/catalog.h"
#include "cloudfit/hf_config.h"
#include "util/dtype_names.h"
#include "util/strings.h"

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
      fmt::format("{}: '{}' is not allowed; {}", field, value, allowed));
}

// A number in [min, max].
Setter Number(const char* field, double Workload::*member, double min, double max,
              const char* unit) {
  return [=](Workload* w, const std::string& value) {
    double v = 0;
    if (!ParseDouble(value, &v) || v < min || v > max) {
      return Bad(field, value, fmt::format("a number of {} in [{}, {}]", unit, min, max));
    }
    w->*member = v;
    return Status::OK();
  };
}

Setter OptionalNumber(const char* field, std::optional<double> Workload::*member, double min,
                      double max, const char* unit, double scale = 1) {
  return [=](Workload* w, const std::string& value) {
    double v = 0;
    if (!ParseDouble(value, &v) || v < min || v > max) {
      return Bad(field, value, fmt::format("a number of {} in [{}, {}]", unit, min, max));
    }
    w->*member = v * scale;
    return Status::OK();
  };
}

Setter Integer(const char* field, int Workload::*member, long long min, long long max,
               const char* what) {
  return [=](Workload* w, const std::string& value) {
    long long v = 0;
    if (!ParseInt(value, &v) || v < min || v > max) {
      return Bad(field, value, fmt::format("a whole number of {} in [{}, {}]", what, min, max));
    }
    w->*member = static_cast<int>(v);
    return Status::OK();
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
    if (!ParseInt(value, &v) || v < 1 || v > 4096) {
      return Bad(field, value, "'auto' or a whole number in [1, 4096]");
    }
    w->*member = static_cast<int>(v);
    return Status::OK();
  };
}

bool ParseBool(const std::string& value, bool* out) {
  std::string v = ToLower(value);
  if (v == "true" || v == "yes" || v == "on" || v == "1") *out = true;
  else if (v == "false" || v == "no" || v == "off" || v == "0") *out = false;
  else return false;
  return true;
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

Setter Architecture(const char* field, double min, double max) {
  return [=](Workload* w, const std::string& value) {
    double v = 0;
    if (!ParseDouble(value, &v) || v < min || v > max) {
      return Bad(field, value, fmt::format("a number in [{}, {}]", min, max));
    }
    w->architecture_overrides[field] = v;
    return Status::OK();
  };
}

const std::vector<FieldSpec>& Specs() {
  static const std::vector<FieldSpec> specs = {
      {"kind", "train, lora, qlora, inference, serve, render, realtime, cad, preprocess",
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
                             {"preprocess", WorkloadKind::kPreprocess}})},
      {"model", "a model of the zoo (cloudfit models), by name or alias",
       [](Workload* w, const std::string& v) {
         if (Trim(v).empty()) return Bad("model", v, "a model name (see 'cloudfit models')");
         w->model_name = v;
         return Status::OK();
       }},
      {"model_config", "path to a Hugging Face config.json",
       [](Workload* w, const std::string& v) {
         w->model_config = v;
         return Status::OK();
       }},
      {"params_b", "parameters, billions (explicit architecture)", Architecture("params_b", 1e-6, 1e5)},
      {"layers", "transformer layers", Architecture("layers", 1, 10000)},
      {"hidden", "hidden size", Architecture("hidden", 1, 1e6)},
      {"heads", "attention heads", Architecture("heads", 1, 10000)},
      {"kv_heads", "key/value heads (grouped-query attention)", Architecture("kv_heads", 1, 10000)},
      {"ffn_hidden", "feed-forward hidden size", Architecture("ffn_hidden", 1, 1e7)},
      {"vocab", "vocabulary size", Architecture("vocab", 1, 1e8)},
      {"experts", "mixture-of-experts experts per layer", Architecture("experts", 1, 10000)},
      {"experts_per_token", "experts active per token", Architecture("experts_per_token", 1, 10000)},
      {"gflops_per_sample", "forward GFLOPs per sample (CNNs, diffusion)",
       Architecture("gflops_per_sample", 1e-9, 1e9)},
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
         w->reference_gpu = v;
         return Status::OK();
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
  };
  return specs;
}

// Applies explicit architecture numbers over the resolved model.
void ApplyOverrides(const std::map<std::string, double>& overrides, Model* m) {
  for (const auto& [key, v] : overrides) {
    int i = static_cast<int>(v);
    if (key == "params_b") m->params = m->active_params = v * 1e9;
    else if (key == "layers") m->layers = i;
    else if (key == "hidden") m->hidden = i;
    else if (key == "heads") m->heads = i;
    else if (key == "kv_heads") m->kv_heads = i;
    else if (key == "ffn_hidden") m->ffn_hidden = i;
    else if (key == "vocab") m->vocab = i;
    else if (key == "experts") m->experts = i;
    else if (key == "experts_per_token") m->experts_per_token = i;
    else if (key == "gflops_per_sample") m->gflops_per_sample = v;
  }
  if (m->kv_heads == 0) m->kv_heads = m->heads;
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
    if (key == s.name) return s.set(w, std::string(Trim(value)));
  }
  std::vector<std::string> names;
  for (const FieldSpec& s : Specs()) names.push_back(s.name);
  return Status::InvalidArgument(
      fmt::format("unknown workload field '{}'{}", name, DidYouMean(ClosestNames(name, names))));
}

Status LoadWorkloadFile(const std::string& path,
                        std::vector<std::pair<std::string, std::string>>* fields) {
  try {
    YAML::Node root = YAML::LoadFile(path);
    if (!root.IsMap()) {
      return Status::InvalidArgument(path + ": expected a mapping of workload fields to values");
    }
    for (const auto& item : root) {
      std::string key = item.first.as<std::string>();
      if (!item.second.IsScalar()) {
        return Status::InvalidArgument(fmt::format("{}:{}: field '{}': expected a single value",
                                                   path, item.second.Mark().line + 1, key));
      }
      fields->emplace_back(key, item.second.as<std::string>());
    }
  } catch (const YAML::BadFile&) {
    return Status::IOError(path + ": cannot open for reading");
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(fmt::format("{}:{}: {}", path, e.mark.line + 1, e.msg));
  }
  return Status::OK();
}

bool Workload::is_llm_like() const {
  // Whisper-style speech models are encoder-decoder transformers too.
  bool transformer_family = model.family == "decoder" || model.family == "moe" ||
                            model.family == "encoder" || model.family == "encoder-decoder" ||
                            (model.family == "speech" && model.layers > 0);
  // Sequence models given only by per-sample FLOPs (GNMT's LSTMs) are not token transformers.
  return transformer_family && (model.layers > 0 || !model.gflops_per_sample);
}

Status FinalizeWorkload(const Catalog& catalog, Workload* w) {
  bool explicit_architecture = w->architecture_overrides.count("params_b") > 0;
  if (!w->model_config.empty()) {
    Status s = LoadHfConfigFile(w->model_config, &w->model);
    if (!s.ok()) return Status::InvalidArgument("model_config: " + s.message());
  } else if (!w->model_name.empty()) {
    const Model* m = nullptr;
    Status s = catalog.FindModel(w->model_name, &m);
    if (!s.ok()) return Status::InvalidArgument("model: " + s.message());
    w->model = *m;
  } else if (explicit_architecture) {
    w->model = Model();
    w->model.name = "custom";
    w->model.family = w->architecture_overrides.count("layers") ? "decoder" : "cnn";
  } else if (w->kind != WorkloadKind::kRender && w->kind != WorkloadKind::kRealtimeRender &&
             w->kind != WorkloadKind::kCad && w->kind != WorkloadKind::kPreprocess) {
    return Status::InvalidArgument(
        "model: missing; give a zoo model (--model), a config.json (--model-config) or "
        "explicit architecture numbers (params_b, layers, hidden, heads)");
  }
  ApplyOverrides(w->architecture_overrides, &w->model);
  Model& m = w->model;
  if (w->is_llm_like() && m.params > 0) {
    if (m.layers <= 0 || m.hidden <= 0 || m.heads <= 0) {
      return Status::InvalidArgument("model: a transformer needs layers, hidden and heads");
    }
    if (m.hidden % m.heads != 0 && m.notes.find("head_dim") == std::string::npos) {
      // Some models (Gemma) set head_dim apart from hidden/heads; the zoo notes them.
    }
    if (m.heads % std::max(1, m.kv_heads) != 0) {
      return Status::InvalidArgument(fmt::format(
          "kv_heads: {} does not divide the {} attention heads", m.kv_heads, m.heads));
    }
    if (m.experts > 0 && (m.experts_per_token < 1 || m.experts_per_token > m.experts)) {
      return Status::InvalidArgument("experts_per_token: must be between 1 and experts");
    }
  }
  if (!w->is_llm_like() && w->kind != WorkloadKind::kRender &&
      w->kind != WorkloadKind::kRealtimeRender && w->kind != WorkloadKind::kCad &&
      w->kind != WorkloadKind::kPreprocess && !m.gflops_per_sample) {
    return Status::InvalidArgument(fmt::format(
        "gflops_per_sample: model '{}' has no per-sample FLOPs; give gflops_per_sample", m.name));
  }
  if ((w->kind == WorkloadKind::kLora || w->kind == WorkloadKind::kQlora) &&
      !(w->is_llm_like() || m.family == "diffusion")) {
    return Status::InvalidArgument("kind: LoRA applies to transformer or diffusion models");
  }
  if (w->kind == WorkloadKind::kQlora) w->precision = NumericFormat::kBf16;  // compute dtype
  // LoRA may sit on an 8-bit base (LLM.int8); full training needs a trainable format.
  bool int_base_ok = w->kind == WorkloadKind::kLora && w->precision == NumericFormat::kInt8;
  if (w->is_training() && !int_base_ok &&
      (w->precision == NumericFormat::kInt8 || w->precision == NumericFormat::kInt4)) {
    return Status::InvalidArgument(
        "precision: int8 and int4 are weight formats for inference; train in fp32, tf32, fp16, "
        "bf16 or fp8 (or use kind qlora for a 4-bit base)");
  }
  if (w->seq_len == 0 && w->is_llm_like()) {
    int cap = m.family == "encoder" ? 512 : 2048;
    w->seq_len = m.context > 0 ? std::min(m.context, cap) : cap;
  }
  if (w->is_llm_like() && m.context > 0 && w->seq_len > m.context &&
      m.family == "encoder") {
    return Status::InvalidArgument(fmt::format("seq_len: {} is longer than {}'s {} positions",
                                               w->seq_len, m.name, m.context));
  }
  if (w->resolution == 0) w->resolution = m.resolution;
  if (w->micro_batch > 0 && w->global_batch > 0 && w->global_batch % w->micro_batch != 0) {
    return Status::InvalidArgument(fmt::format(
        "batch: the global batch {} is not a multiple of micro_batch {}", w->global_batch,
        w->micro_batch));
  }
  if (w->kind == WorkloadKind::kRender && w->frames <= 0) {
    return Status::InvalidArgument("frames: an offline render needs a frame count above 0");
  }
  if (w->kind == WorkloadKind::kRender && !w->seconds_per_frame && !w->benchmark_score) {
    return Status::InvalidArgument(
        "seconds_per_frame: give the render time per frame on a reference GPU "
        "(seconds_per_frame + reference_gpu)");
  }
  if (w->seconds_per_frame && w->reference_gpu.empty()) {
    return Status::InvalidArgument("reference_gpu: seconds_per_frame needs the GPU it was measured on");
  }
  if (w->kind == WorkloadKind::kPreprocess && w->data_gb <= 0) {
    return Status::InvalidArgument("data_gb: preprocessing needs the data size in GB");
  }
  if (w->kind == WorkloadKind::kServing || w->kind == WorkloadKind::kInference) {
    Status s = ResolveServingEngine(catalog, w);
    if (!s.ok()) return s;
  }
  if (w->samples == 0 && w->tokens == 0 && w->epochs > 0 && w->dataset_samples == 0) {
    return Status::InvalidArgument("dataset_samples: epochs need the dataset size in samples");
  }
  return Status::OK();
}

std::string_view WorkloadKindName(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::kTrain: return "train";
    case WorkloadKind::kLora: return "lora";
    case WorkloadKind::kQlora: return "qlora";
    case WorkloadKind::kInference: return "inference";
    case WorkloadKind::kServing: return "serve";
    case WorkloadKind::kRender: return "render";
    case WorkloadKind::kRealtimeRender: return "realtime";
    case WorkloadKind::kCad: return "cad";
    case WorkloadKind::kPreprocess: return "preprocess";
  }
  return "";
}

std::string_view NumericFormatName(NumericFormat format) {
  switch (format) {
    case NumericFormat::kFp32: return "fp32";
    case NumericFormat::kTf32: return "tf32";
    case NumericFormat::kFp16: return "fp16";
    case NumericFormat::kBf16: return "bf16";
    case NumericFormat::kFp8: return "fp8";
    case NumericFormat::kInt8: return "int8";
    case NumericFormat::kInt4: return "int4";
  }
  return "";
}

double BytesPerWeight(NumericFormat format) {
  switch (format) {
    case NumericFormat::kFp32:
    case NumericFormat::kTf32:
      return 4;
    case NumericFormat::kFp16:
    case NumericFormat::kBf16:
      return 2;
    case NumericFormat::kFp8:
    case NumericFormat::kInt8:
      return 1;
    case NumericFormat::kInt4:
      // 4-bit weights plus one 16-bit scale per group of 32 (GPTQ/AWQ-style): 4.5 bits.
      return 4.5 / 8;
  }
  return 2;
}

RateScale Calibration::For(const std::string& device) const {
  RateScale scale = all;
  auto it = by_device.find(device);
  if (it != by_device.end()) {
    scale.compute *= it->second.compute;
    scale.bandwidth *= it->second.bandwidth;
  }
  return scale;
}

}  // namespace cloudfit

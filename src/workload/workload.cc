#include "cloudfit/workload.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <functional>

#include "cloudfit/catalog.h"
#include "cloudfit/hf_config.h"
#include "util/dtype_names.h"
#include "util/file.h"
#include "util/strings.h"
#include "util/validate.h"
#include "workload/workload_defaults.h"

namespace cloudfit {

namespace {

// Applies explicit architecture numbers over the resolved model.
void ApplyOverrides(const std::map<std::string, double>& overrides, Model* m) {
  for (const auto& [key, v] : overrides) {
    int i = static_cast<int>(v);
    if (key == "params_b")
      m->params = m->active_params = v * 1e9;
    else if (key == "layers")
      m->layers = i;
    else if (key == "hidden")
      m->hidden = i;
    else if (key == "heads")
      m->heads = i;
    else if (key == "kv_heads")
      m->kv_heads = i;
    else if (key == "ffn_hidden")
      m->ffn_hidden = i;
    else if (key == "vocab")
      m->vocab = i;
    else if (key == "experts")
      m->experts = i;
    else if (key == "experts_per_token")
      m->experts_per_token = i;
    else if (key == "gflops_per_sample")
      m->gflops_per_sample = v;
  }
  if (m->kv_heads == 0) m->kv_heads = m->heads;
}

}  // namespace

Status ParseWorkloadDocument(std::string_view text, const std::string& origin,
                             std::vector<std::pair<std::string, std::string>>* fields) {
  if (text.size() > kMaxDocumentBytes) {
    return Status::InvalidArgument(fmt::format("{}: {} bytes; a workload file is at most {}",
                                               origin, text.size(), kMaxDocumentBytes));
  }
  try {
    YAML::Node root = YAML::Load(std::string(text));
    if (!root.IsMap()) {
      return Status::InvalidArgument(origin + ": expected a mapping of workload fields to values");
    }
    for (const auto& item : root) {
      if (!item.first.IsScalar()) {
        return Status::InvalidArgument(fmt::format("{}:{}: a field name must be a single word",
                                                   origin, item.first.Mark().line + 1));
      }
      std::string key = item.first.as<std::string>();
      if (!item.second.IsScalar()) {
        return Status::InvalidArgument(fmt::format("{}:{}: field '{}': expected a single value",
                                                   origin, item.second.Mark().line + 1,
                                                   Shown(key)));
      }
      fields->emplace_back(key, item.second.as<std::string>());
    }
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(fmt::format("{}:{}: {}", origin, e.mark.line + 1, e.msg));
  } catch (const std::exception& e) {
    // yaml-cpp's own depth guard and conversions throw other types too.
    return Status::InvalidArgument(fmt::format("{}: {}", origin, e.what()));
  }
  return Status::OK();
}

Status LoadWorkloadFile(const std::string& path,
                        std::vector<std::pair<std::string, std::string>>* fields) {
  std::string text;
  Status s = ReadFile(path, &text, kMaxDocumentBytes);
  if (!s.ok()) return s;
  return ParseWorkloadDocument(text, path, fields);
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
  if (!w->model_config_json.empty()) {
    nlohmann::json config;
    Status s = ParseJson("model_config", w->model_config_json, kMaxDocumentBytes, &config);
    std::string name = "config.json";
    if (s.ok() && config.is_object()) {
      auto it = config.find("_name_or_path");
      if (it != config.end() && it->is_string() && CheckName("", it->get<std::string>()).ok()) {
        name = it->get<std::string>();
      }
    }
    if (s.ok()) s = ModelFromHfConfig(config, name, &w->model);
    if (!s.ok()) return Status::InvalidArgument("model_config: " + s.message());
  } else if (!w->model_config.empty()) {
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
             w->kind != WorkloadKind::kCad && w->kind != WorkloadKind::kPreprocess &&
             w->kind != WorkloadKind::kClassicMl) {
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
      return Status::InvalidArgument(
          fmt::format("kv_heads: {} does not divide the {} attention heads", m.kv_heads, m.heads));
    }
    if (m.experts > 0 && (m.experts_per_token < 1 || m.experts_per_token > m.experts)) {
      return Status::InvalidArgument("experts_per_token: must be between 1 and experts");
    }
  }
  if (!w->is_llm_like() && w->kind != WorkloadKind::kRender &&
      w->kind != WorkloadKind::kRealtimeRender && w->kind != WorkloadKind::kCad &&
      w->kind != WorkloadKind::kPreprocess && w->kind != WorkloadKind::kClassicMl &&
      !m.gflops_per_sample) {
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
  // seq_len and batch default to the model's recipe (workload_defaults.cc), after the checks
  // below that need only what the user gave.
  if (w->is_llm_like() && m.context > 0 && w->seq_len > m.context && m.family == "encoder") {
    return Status::InvalidArgument(
        fmt::format("seq_len: {} is longer than {}'s {} positions", w->seq_len, m.name, m.context));
  }
  if (w->resolution == 0) w->resolution = m.resolution;
  if (w->micro_batch > 0 && w->global_batch > 0 && w->global_batch % w->micro_batch != 0) {
    return Status::InvalidArgument(
        fmt::format("batch: the global batch {} is not a multiple of micro_batch {}",
                    w->global_batch, w->micro_batch));
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
    return Status::InvalidArgument(
        "reference_gpu: seconds_per_frame needs the GPU it was measured on");
  }
  if (w->kind == WorkloadKind::kPreprocess && w->data_gb <= 0) {
    return Status::InvalidArgument("data_gb: preprocessing needs the data size in GB");
  }
  if (w->kind == WorkloadKind::kServing || w->kind == WorkloadKind::kInference) {
    Status s = ResolveServingEngine(catalog, w);
    if (!s.ok()) return s;
  }
  return ApplyWorkloadDefaults(catalog, w);
}

std::string_view WorkloadKindName(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::kTrain:
      return "train";
    case WorkloadKind::kLora:
      return "lora";
    case WorkloadKind::kQlora:
      return "qlora";
    case WorkloadKind::kInference:
      return "inference";
    case WorkloadKind::kServing:
      return "serve";
    case WorkloadKind::kRender:
      return "render";
    case WorkloadKind::kRealtimeRender:
      return "realtime";
    case WorkloadKind::kCad:
      return "cad";
    case WorkloadKind::kPreprocess:
      return "preprocess";
    case WorkloadKind::kClassicMl:
      return "classic-ml";
  }
  return "";
}

std::string_view DataTypeName(DataType type) {
  switch (type) {
    case DataType::kAuto:
      return "auto";
    case DataType::kImage:
      return "image";
    case DataType::kText:
      return "text";
    case DataType::kAudio:
      return "audio";
    case DataType::kVideo:
      return "video";
    case DataType::kTabular:
      return "tabular";
    case DataType::kNone:
      return "none";
  }
  return "";
}

std::string_view NumericFormatName(NumericFormat format) {
  switch (format) {
    case NumericFormat::kFp32:
      return "fp32";
    case NumericFormat::kTf32:
      return "tf32";
    case NumericFormat::kFp16:
      return "fp16";
    case NumericFormat::kBf16:
      return "bf16";
    case NumericFormat::kFp8:
      return "fp8";
    case NumericFormat::kInt8:
      return "int8";
    case NumericFormat::kInt4:
      return "int4";
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

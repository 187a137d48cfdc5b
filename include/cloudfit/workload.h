// A workload: what the user wants to run, in one validated value built from command-line flags
// or from a YAML/JSON file. Every field has a unit (in its name or comment), a default a user
// would expect, and a validation error that names it.
#ifndef CLOUDFIT_WORKLOAD_H_
#define CLOUDFIT_WORKLOAD_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cloudfit/model.h"
#include "cloudfit/serving_engine.h"
#include "cloudfit/status.h"

namespace cloudfit {

class Catalog;

enum class WorkloadKind {
  kTrain,           // from scratch or full fine-tune
  kLora,            // LoRA fine-tune: frozen base, trainable adapters
  kQlora,           // QLoRA: 4-bit NF4 base with double quantization, adapters in 16 bit
  kInference,       // batch (offline) inference
  kServing,         // online serving at a request rate
  kRender,          // offline rendering of frames
  kRealtimeRender,  // cloud gaming, 3D visualisation streams
  kCad,             // CAD/CAE visualisation sessions
  kPreprocess,      // data preprocessing on CPUs
  kClassicMl,       // tabular ML: gradient-boosted trees or linear models, GPU optional
};

// The numeric format of weights and arithmetic.
enum class NumericFormat { kFp32, kTf32, kFp16, kBf16, kFp8, kInt8, kInt4 };

enum class Optimizer { kAdamW, kSgdMomentum, kAdafactor, kAdam8bit };
enum class Recompute { kNone, kSelective, kFull };
enum class LoraTargets { kQueryValue, kAttention, kMlp, kAllLinear };
// How the loss turns logits into a cross-entropy: materialise all the logits and an FP32 copy
// (PyTorch's default), upcast them a chunk at a time (torchtune's chunked loss), or fuse the
// output projection with the loss so the logits are never whole (Liger's fused linear CE).
enum class CrossEntropy { kStandard, kChunked, kFused };

// Speed corrections from measurements (cloudfit/measured_calibration.h), never read from a
// workload file. A device's effective peak FLOP/s and memory bandwidth are multiplied by these,
// so the measured run is reproduced and other hardware is rescaled through the model.
struct RateScale {
  double compute = 1;
  double bandwidth = 1;
};

struct Calibration {
  RateScale all;  // from a measured throughput of this workload: applies to every device
  // From a probe: this machine's device only, by accelerator or CPU generation name.
  std::map<std::string, RateScale> by_device;
  std::vector<std::string> basis;  // what was measured, for the output ("1.9 it/s on 1x A10")

  bool active() const { return !basis.empty(); }
  RateScale For(const std::string& device) const;  // `all` times the device's own scale
};

// A value the user did not give and cloudfit chose, printed first in every answer: what was
// assumed, and why (the recipe or data it comes from).
struct Assumption {
  std::string field;  // the workload field, as a file or flag names it
  std::string value;  // as printed
  std::string why;
};

// What the input pipeline reads (sets the default per-vCPU loader rate, data/loader_rates.csv).
enum class DataType { kAuto, kImage, kText, kAudio, kVideo, kTabular, kNone };
// Classic ML algorithms (kind classic-ml).
enum class MlAlgorithm { kGbdt, kLinear };
enum class OperatingSystem { kAuto, kLinux, kWindows };

struct Workload {
  WorkloadKind kind = WorkloadKind::kTrain;
  std::string model_name;    // zoo name or alias
  std::string model_config;  // path to a Hugging Face config.json instead of a zoo name
  // Or the config.json itself, as JSON text (HTTP requests send it inline: the API reads no
  // files). At most one of the two is set.
  std::string model_config_json;
  Model model;  // resolved architecture (zoo, config.json or explicit numbers)
  // Architecture numbers given explicitly (params_b, layers, ...), applied over the model.
  std::map<std::string, double> architecture_overrides;

  NumericFormat precision = NumericFormat::kBf16;
  int global_batch = 0;  // samples per optimizer step over all devices; 0 = derived
  int micro_batch = 0;   // samples per device per forward pass; 0 = derived
  int seq_len = 0;       // tokens per sample; 0 = the model's default for the kind
  int resolution = 0;    // image side, pixels; 0 = the model's
  // Amount of work, any one of these (tokens wins, then samples, then epochs x dataset).
  double tokens = 0;
  double samples = 0;
  double epochs = 0;
  double dataset_samples = 0;
  double steps = 0;  // optimizer steps
  // How the amount of work was resolved (FinalizeWorkload states the rule in `assumptions`);
  // true when no amount was given and one was assumed, which a recommendation refuses.
  bool amount_assumed = false;

  Optimizer optimizer = Optimizer::kAdamW;
  // Mixed precision keeps fp32 master weights in the optimizer (Megatron, DeepSpeed, AMP);
  // false = pure 16-bit training, optimizer states in the model's dtype.
  bool master_weights = true;
  int zero_stage = -1;        // 0-3; FSDP full sharding is stage 3; -1 = choose automatically
  int tensor_parallel = 0;    // 0 = choose automatically
  int pipeline_parallel = 0;  // 0 = choose automatically
  Recompute recompute = Recompute::kNone;
  bool flash_attention = true;
  int lora_rank = 16;
  LoraTargets lora_targets = LoraTargets::kAllLinear;
  // Memory recipes of real fine-tuning runs (torchtune, Hugging Face TRL, DeepSpeed).
  bool optimizer_in_backward = false;  // step and free each gradient as backward produces it
  bool paged_optimizer = false;        // bitsandbytes paged states: spill to host under pressure
  CrossEntropy cross_entropy = CrossEntropy::kStandard;
  int loss_chunks = 8;              // chunks of the chunked cross-entropy
  bool activation_offload = false;  // keep saved activations in host memory
  bool optimizer_offload = false;   // optimizer state and master weights on the CPU
  // The software that runs the kernels, for its efficiencies (data/efficiency.csv): pytorch
  // (eager PyTorch with cuBLAS/cuDNN), llama.cpp, vllm, tensorrt-llm. Empty: by kind.
  std::string software;
  // The CUDA toolkit the software's libraries (cuBLAS, cuDNN) were built for, as major.minor;
  // 0 = a current one. Before 12.0 they have no Hopper (wgmma/TMA) kernels.
  double cuda_version = 0;

  // Serving.
  double request_rate = 1;  // requests/s
  int prompt_tokens = 512;
  int output_tokens = 256;
  std::optional<double> ttft_target_s;  // time to first token
  std::optional<double> tpot_target_s;  // time per output token
  // The serving engine by name (data/serving_engines.csv), resolved by FinalizeWorkload.
  std::string engine = "vllm";
  ServingEngineProfile engine_profile;
  std::optional<double> gpu_memory_utilization;  // the engine's memory share; unset = its default
  std::string kv_cache_dtype = "auto";           // auto = the model's 16-bit format
  int max_batch = 0;  // concurrent sequences (max_num_seqs); 0 = the engine's default
  double latency_percentile = 0.95;  // the TTFT and TPOT targets hold at this percentile
  // Replicas are sized so each runs at this share of its saturation throughput; the
  // autoscaling policy scales out at the same figure.
  double target_utilisation = 0.7;
  // How inference spreads a model over GPUs: tensor parallel (vLLM, TensorRT-LLM) or whole
  // layers per GPU run one after another (llama.cpp's default split, Accelerate's device_map).
  bool layer_split = false;
  // Bits per weight of a quantized format when it differs from the precision's (GGUF Q4_K_M
  // averages about 4.9); 0 = the precision's own.
  double weight_bits = 0;
  int diffusion_steps = 30;  // denoising steps per image

  // Rendering.
  double frames = 0;
  std::optional<double> seconds_per_frame;  // measured on `reference_gpu`
  std::string reference_gpu;
  std::optional<double> benchmark_score;  // Blender Open Data samples/min of the reference
  double scene_memory_gib = 0;
  int width = 1920;
  int height = 1080;
  double fps = 60;
  int streams = 1;
  std::string codec = "h264";  // h264, hevc, av1

  // Data preprocessing and input pipelines.
  double data_gb = 0;
  double per_core_mb_s = 50;                        // preprocessing throughput of one vCPU, MB/s
  std::optional<double> loader_samples_per_core_s;  // input-pipeline rate of one vCPU
  std::optional<double> storage_gb_s;               // disk or object-store read rate
  DataType data_type = DataType::kAuto;             // auto: from the model's family

  // Classic ML (tabular).
  double rows = 0;      // training or scoring rows
  double features = 0;  // columns per row
  int trees = 0;        // boosting rounds; 0 = the libraries' default
  int tree_depth = 0;   // 0 = the libraries' default
  MlAlgorithm algorithm = MlAlgorithm::kGbdt;
  bool predict = false;  // score rows with a trained model instead of training

  // Real-time and CAD sessions: what each session needs (0 = the session profile's).
  std::string session_profile;  // data/sessions.csv; empty = the kind's default
  double vcpus_per_session = 0;
  double ram_gib_per_session = 0;
  double gpu_memory_gib_per_session = 0;
  double stream_mbps = 0;  // video bitrate per stream; 0 = from resolution, fps and codec

  // The whole job's bill beyond instance hours (src/cost).
  std::optional<double> egress_gb;     // data sent out over the job (or a month of serving)
  std::string egress_to = "internet";  // internet or region (another region of the provider)
  std::optional<double> image_gb;      // container image pulled by every node at start-up
  int checkpoints_kept = 2;            // checkpoints kept in storage during the job
  OperatingSystem os = OperatingSystem::kAuto;

  Calibration calibration;
  // Fields the user gave (file, flags or request), by canonical name; the rest are defaults.
  std::set<std::string> given;
  // Filled by FinalizeWorkload: every default that shapes the answer, stated.
  std::vector<Assumption> assumptions;

  bool is_training() const {
    return kind == WorkloadKind::kTrain || kind == WorkloadKind::kLora ||
           kind == WorkloadKind::kQlora;
  }
  bool is_llm_like() const;  // a transformer with a token stream
  bool was_given(const std::string& field) const { return given.count(field) > 0; }
  // Serving and streaming run for a period rather than to the end of a job.
  bool is_service() const {
    return kind == WorkloadKind::kServing || kind == WorkloadKind::kRealtimeRender ||
           kind == WorkloadKind::kCad;
  }
  bool uses_windows() const { return os == OperatingSystem::kWindows; }
};

// The field names a workload file or --set accepts, with units and allowed values.
struct WorkloadField {
  std::string name;
  std::string help;
};
const std::vector<WorkloadField>& WorkloadFields();

// Sets one field from text, as a file or flag gives it. Errors name the field and what is
// allowed: "batch: -4 is not allowed; a whole number >= 1".
Status SetWorkloadField(Workload* w, const std::string& name, const std::string& value);

// Reads a YAML or JSON mapping of field names to values from a regular file of at most
// kMaxDocumentBytes (util/validate.h).
Status LoadWorkloadFile(const std::string& path,
                        std::vector<std::pair<std::string, std::string>>* fields);
// The same from text; `origin` names it in errors.
Status ParseWorkloadDocument(std::string_view text, const std::string& origin,
                             std::vector<std::pair<std::string, std::string>>* fields);

// Resolves the model (zoo, config.json, or explicit numbers already set), fills defaults that
// depend on it, and checks the whole workload for consistency.
Status FinalizeWorkload(const Catalog& catalog, Workload* w);

std::string_view WorkloadKindName(WorkloadKind kind);
std::string_view DataTypeName(DataType type);
std::string_view NumericFormatName(NumericFormat format);
// Bytes per weight for a format (int4 counts its quantization scales: 4.5 bits).
double BytesPerWeight(NumericFormat format);

}  // namespace cloudfit

#endif  // CLOUDFIT_WORKLOAD_H_

#include "workload/workload_defaults.h"

#include <fmt/format.h>

#include <cmath>

#include "catalog/reference_tables.h"
#include "cloudfit/table.h"
#include "util/strings.h"

namespace cloudfit {

namespace {

// Offline inference with no amount: the estimator's figure for 10,000 samples or requests.
constexpr double kAssumedInferenceSamples = 10000;
constexpr double kAssumedTrainingSteps = 1000;
// When neither a recipe nor a family default exists: a common fine-tuning batch.
constexpr int kFallbackBatch = 32;
// Two amounts "agree" within this relative tolerance (rounding in what users type).
constexpr double kAgreement = 0.01;

void Assume(Workload* w, std::string field, std::string value, std::string why) {
  w->assumptions.push_back({std::move(field), std::move(value), std::move(why)});
}

std::string Count(double v) { return FormatNumber(v, v < 100 ? 2 : 0); }

bool Agree(double a, double b) { return std::abs(a - b) <= kAgreement * std::max(a, b); }

bool IsTraining(const Workload& w) { return w.is_training(); }

// The model reads tokens (transformers) rather than whole samples (images, clips).
bool TokenModel(const Workload& w) { return w.is_llm_like(); }

struct Recipe {
  int batch = 0;
  int seq_len = 0;
  std::string source;
  std::string notes;
  std::string matched;  // the model or "*family" row that matched
};

// (model, kind), then (family, kind), then the model's and the family's full-training recipe.
bool FindRecipe(const Catalog& catalog, const Workload& w, Recipe* out, Status* error) {
  std::shared_ptr<const CsvTable> file;
  Status s = ReadReferenceTable(catalog, "recipes.csv", &file);
  if (s.code() == Status::Code::kNotFound) return false;
  if (s.ok()) s = file->RequireColumns({"model", "kind", "batch", "seq_len", "source"});
  if (!s.ok()) {
    *error = s;
    return false;
  }
  const CsvTable& table = *file;
  std::string kind = w.kind == WorkloadKind::kTrain ? "train" : "lora";
  std::string family = "*" + w.model.family;
  std::vector<std::pair<std::string, std::string>> order = {
      {w.model.name, kind}, {family, kind}, {w.model.name, "train"}, {family, "train"}};
  for (const auto& [model, wanted_kind] : order) {
    for (const CsvRow& row : table.rows) {
      CsvRowReader r(table, row);
      if (std::string(r.Text("model")) != model || std::string(r.Text("kind")) != wanted_kind) {
        continue;
      }
      out->batch = static_cast<int>(r.Number("batch", 1, 1e7));
      out->seq_len = static_cast<int>(r.OptionalNumber("seq_len", 1, 1e7).value_or(0));
      out->source = r.RequiredText("source");
      out->notes = r.Text("notes");
      out->matched = model;
      if (!r.status().ok()) {
        *error = r.status();
        return false;
      }
      return true;
    }
  }
  return false;
}

// The sequence length when neither the user nor a recipe gives one: the model's context, capped
// at BERT's 512 for encoders and 2,048 for the rest.
int ContextDefault(const Model& m) {
  int cap = m.family == "encoder" ? 512 : 2048;
  return m.context > 0 ? std::min(m.context, cap) : cap;
}

Status ApplyRecipe(const Catalog& catalog, Workload* w) {
  bool llm = w->is_llm_like();
  bool wants_batch = IsTraining(*w) && w->global_batch == 0 && w->micro_batch == 0;
  bool wants_seq = llm && w->seq_len == 0;
  Recipe recipe;
  Status error;
  bool found = IsTraining(*w) && FindRecipe(catalog, *w, &recipe, &error);
  if (!error.ok()) return error;
  std::string origin = found && recipe.matched != w->model.name
                           ? fmt::format(" (no recipe for {}: its family's)", w->model.name)
                           : "";
  if (wants_batch) {
    if (found) {
      w->global_batch = recipe.batch;
      Assume(w, "batch", std::to_string(recipe.batch),
             fmt::format("the usual recipe{}: {} ({}); per device, the largest micro-batch that "
                         "fits, the rest accumulated",
                         origin, recipe.notes, recipe.source));
    } else {
      w->global_batch = kFallbackBatch;
      Assume(w, "batch", std::to_string(kFallbackBatch),
             fmt::format("no published recipe for {} in data/recipes.csv: a common fine-tuning "
                         "batch; give batch",
                         w->model.name.empty() ? "this model" : w->model.name));
    }
  } else if (IsTraining(*w) && w->global_batch == 0) {
    Assume(w, "batch", "micro_batch x data-parallel devices",
           "micro_batch given without a global batch: each device runs micro_batch samples a step");
  }
  if (wants_seq) {
    if (found && recipe.seq_len > 0) {
      w->seq_len =
          w->model.context > 0 ? std::min(recipe.seq_len, w->model.context) : recipe.seq_len;
      Assume(w, "seq_len", std::to_string(w->seq_len),
             wants_batch
                 ? "the same recipe as batch"
                 : fmt::format("the usual recipe{}: {} ({})", origin, recipe.notes, recipe.source));
    } else {
      w->seq_len = ContextDefault(w->model);
      // Generation is sized by prompt and output tokens; seq_len shapes training and encoders.
      if (w->is_training() || w->model.family == "encoder") {
        Assume(w, "seq_len", std::to_string(w->seq_len),
               "no recipe gives one: the model's context, at most 512 (encoders) or 2,048");
      }
    }
  }
  return Status::OK();
}

// Training: see the rule in workload_defaults.h.
Status ResolveTrainingAmount(Workload* w) {
  bool tokens = w->tokens > 0, samples = w->samples > 0, epochs = w->epochs > 0;
  bool dataset = w->dataset_samples > 0, steps = w->steps > 0;
  double seq = std::max(1, w->seq_len);
  if (tokens && !TokenModel(*w)) {
    return Status::InvalidArgument(
        fmt::format("tokens: {} reads {}, not tokens; give samples, or epochs with dataset_samples",
                    w->model.name, w->model.family == "speech" ? "audio" : "images"));
  }
  if (steps && (tokens || samples || epochs)) {
    return Status::InvalidArgument(
        "steps: give the amount of work once: steps, or tokens, samples or epochs, not both");
  }
  if (samples && epochs) {
    return Status::InvalidArgument(
        "samples and epochs: both give the amount of work; give samples (the total) or epochs "
        "with dataset_samples");
  }
  if (tokens && samples && !Agree(w->tokens, w->samples * seq)) {
    return Status::InvalidArgument(fmt::format(
        "tokens and samples disagree: {} tokens is not {} samples x seq_len {}; give one",
        Count(w->tokens), Count(w->samples), w->seq_len));
  }
  if (epochs && dataset && tokens) {
    double implied = w->epochs * w->dataset_samples * seq;
    if (!Agree(w->tokens, implied)) {
      return Status::InvalidArgument(fmt::format(
          "tokens and epochs disagree: {} epochs x {} dataset_samples x seq_len {} = {} tokens, "
          "not {}; give tokens (the total) or epochs with dataset_samples",
          Count(w->epochs), Count(w->dataset_samples), w->seq_len, Count(implied),
          Count(w->tokens)));
    }
    return Status::OK();
  }
  if (epochs && dataset) return Status::OK();  // epochs x dataset_samples samples
  if (epochs && tokens) {
    double per_epoch = w->tokens;
    w->tokens = per_epoch * w->epochs;
    w->dataset_samples = per_epoch / seq;
    Assume(w, "tokens", Count(w->tokens),
           fmt::format("epochs with tokens and no dataset_samples: the {} tokens are one epoch, "
                       "so {} epochs process {} tokens",
                       Count(per_epoch), Count(w->epochs), Count(w->tokens)));
    return Status::OK();
  }
  if (epochs) {
    return Status::InvalidArgument(
        "epochs: need the data set's size: dataset_samples, or tokens (one epoch's)");
  }
  if (dataset && !tokens && !samples) {
    w->epochs = 1;
    Assume(w, "epochs", "1", "dataset_samples given without epochs: one pass over the data");
    return Status::OK();
  }
  if (tokens || samples || steps) return Status::OK();
  w->steps = kAssumedTrainingSteps;
  w->amount_assumed = true;
  Assume(w, "steps", Count(kAssumedTrainingSteps),
         "no amount of work (tokens, samples, epochs with dataset_samples, or steps): time and "
         "cost are for 1,000 optimizer steps only");
  return Status::OK();
}

Status ResolveInferenceAmount(Workload* w) {
  if (w->steps > 0) {
    return Status::InvalidArgument("steps: inference counts samples (or tokens), not steps");
  }
  bool tokens = w->tokens > 0, samples = w->samples > 0, epochs = w->epochs > 0;
  if (epochs && samples) {
    return Status::InvalidArgument("samples and epochs: both give the amount of work; give one");
  }
  if (tokens && !TokenModel(*w)) {
    return Status::InvalidArgument(
        fmt::format("tokens: {} does not generate tokens; give samples", w->model.name));
  }
  if (epochs) {
    if (w->dataset_samples <= 0) {
      return Status::InvalidArgument("epochs: need the data set's size: dataset_samples");
    }
    w->samples = w->epochs * w->dataset_samples;
  } else if (!samples && w->dataset_samples > 0) {
    w->samples = w->dataset_samples;
  }
  if (tokens) {
    double requests = w->tokens / std::max(1, w->output_tokens);
    if (w->samples > 0 && !Agree(requests, w->samples)) {
      return Status::InvalidArgument(fmt::format(
          "tokens and samples disagree: {} generated tokens is {} requests of {} output tokens, "
          "not {}; give one",
          Count(w->tokens), Count(requests), w->output_tokens, Count(w->samples)));
    }
    w->samples = requests;
    Assume(w, "samples", Count(requests),
           fmt::format("tokens count generated tokens: {} / {} output tokens per request",
                       Count(w->tokens), w->output_tokens));
    return Status::OK();
  }
  if (w->samples > 0) return Status::OK();
  w->samples = kAssumedInferenceSamples;
  w->amount_assumed = true;
  Assume(w, "samples", Count(kAssumedInferenceSamples),
         "no amount of work (samples, tokens or epochs with dataset_samples): time and cost are "
         "for 10,000 samples (requests for language models) only");
  return Status::OK();
}

DataType DefaultDataType(const Model& m) {
  if (m.family == "cnn" || m.family == "vit" || m.family == "diffusion") return DataType::kImage;
  if (m.family == "speech") return DataType::kAudio;
  if (m.layers > 0) return DataType::kText;
  return DataType::kNone;
}

// loader_samples_per_core_s from data/loader_rates.csv when the user gave none.
Status ApplyLoaderRate(const Catalog& catalog, Workload* w) {
  bool reads_data = IsTraining(*w) || (w->kind == WorkloadKind::kInference && !w->is_llm_like());
  if (w->data_type == DataType::kAuto) {
    w->data_type = DefaultDataType(w->model);
    if (reads_data && w->data_type != DataType::kNone && !w->loader_samples_per_core_s) {
      Assume(w, "data_type", std::string(DataTypeName(w->data_type)),
             fmt::format("{} is of the {} family", w->model.name, w->model.family));
    }
  }
  if (!reads_data || w->loader_samples_per_core_s || w->data_type == DataType::kNone ||
      w->data_type == DataType::kTabular) {
    return Status::OK();
  }
  std::shared_ptr<const CsvTable> file;
  Status s = ReadReferenceTable(catalog, "loader_rates.csv", &file);
  if (s.code() == Status::Code::kNotFound) return Status::OK();
  if (s.ok()) s = file->RequireColumns({"data_type", "rate_per_vcpu_s", "unit", "source"});
  if (!s.ok()) return s;
  const CsvTable& table = *file;
  for (const CsvRow& row : table.rows) {
    CsvRowReader r(table, row);
    if (std::string(r.Text("data_type")) != DataTypeName(w->data_type)) continue;
    double rate = r.Number("rate_per_vcpu_s", 1e-6, 1e12);
    std::string unit(r.Text("unit"));
    double reference = r.OptionalNumber("reference_pixels", 1, 1e6).value_or(0);
    std::string source = r.RequiredText("source");
    if (!r.status().ok()) return r.status();
    double samples = rate;
    std::string how = fmt::format("{} {}/s per vCPU", FormatNumber(rate, 0), unit);
    if (unit == "tokens") {
      samples = rate / std::max(1, w->seq_len);
      how += fmt::format(" / seq_len {}", w->seq_len);
    } else if (unit == "images" && reference > 0 && w->resolution > reference) {
      samples = rate * std::pow(reference / w->resolution, 2);
      how += fmt::format(" x ({:.0f} / {} px)^2", reference, w->resolution);
    }
    w->loader_samples_per_core_s = samples;
    Assume(w, "loader_samples_per_core_s", FormatNumber(samples, samples < 10 ? 2 : 0),
           fmt::format("input pipeline for {} data: {} (data/loader_rates.csv, {}); a GPU the "
                       "vCPUs cannot feed is input-bound",
                       DataTypeName(w->data_type), how, source));
    return Status::OK();
  }
  return Status::OK();
}

void ServingAssumptions(Workload* w) {
  if (!w->was_given("request_rate")) {
    Assume(w, "request_rate", Count(w->request_rate), "requests per second; give request_rate");
  }
  if (!w->was_given("prompt_tokens") || !w->was_given("output_tokens")) {
    Assume(w, "prompt_tokens/output_tokens",
           fmt::format("{}/{}", w->prompt_tokens, w->output_tokens),
           "a chat turn's prompt and answer; give prompt_tokens and output_tokens");
  }
  // An interactive endpoint has latency targets even when none is given: without them a replica
  // that streams a token a second (a CPU, or a GPU at its largest batch) would count as serving.
  // The defaults are MLPerf Inference's server-scenario limits for Llama 2 70B and Mixtral 8x7B
  // (mlcommons/inference loadgen/mlperf.conf: TTFT 2,000 ms, TPOT 200 ms; p99 there, the
  // workload's percentile here). Giving either target replaces both defaults.
  if (!w->ttft_target_s && !w->tpot_target_s) {
    w->ttft_target_s = 2.0;
    w->tpot_target_s = 0.2;
    Assume(w, "ttft_target_ms/tpot_target_ms", "2000/200",
           "an interactive endpoint's limits (MLPerf Inference server scenario, Llama 2 70B: "
           "TTFT 2 s, TPOT 200 ms); give ttft_target_ms or tpot_target_ms (a large value to "
           "size for throughput alone)");
  }
  if (!w->was_given("engine")) {
    Assume(w, "engine", w->engine, "the serving engine (data/serving_engines.csv); give engine");
  }
  if ((w->ttft_target_s || w->tpot_target_s) && !w->was_given("latency_percentile")) {
    Assume(w, "latency_percentile", fmt::format("p{:.0f}", 100 * w->latency_percentile),
           "the latency targets hold at this percentile of requests");
  }
  if (!w->was_given("target_utilisation")) {
    Assume(w, "target_utilisation", fmt::format("{:.0f}%", 100 * w->target_utilisation),
           "each replica runs at this share of its saturation; autoscaling scales out there");
  }
}

void StreamAssumptions(Workload* w) {
  if (w->session_profile.empty()) {
    w->session_profile = w->kind == WorkloadKind::kCad ? "medium" : "aaa";
    Assume(w, "session_profile", w->session_profile,
           w->kind == WorkloadKind::kCad
               ? "a medium CAD seat (NVIDIA RTX vWS sizing guide: 8 vCPU, 16 GB RAM, 8 GB frame "
                 "buffer); light or heavy in data/sessions.csv"
               : "a current AAA game (16 GB RAM, 8 GB of GPU memory, 8 vCPUs); esports for "
                 "lighter titles, data/sessions.csv");
  }
  if (!w->was_given("streams")) {
    Assume(w, "streams", std::to_string(w->streams), "simultaneous sessions; give streams");
  }
  if (!w->was_given("width") || !w->was_given("height") || !w->was_given("fps")) {
    Assume(w, "resolution", fmt::format("{}x{} at {} fps", w->width, w->height, w->fps),
           "give width, height and fps");
  }
  if (w->os == OperatingSystem::kAuto) {
    w->os = OperatingSystem::kWindows;
    Assume(w, "os", "windows",
           w->kind == WorkloadKind::kCad
               ? "CAD applications (SolidWorks, CATIA, NX, Revit) run on Windows: its licence is "
                 "billed; os=linux drops it"
               : "most PC games run on Windows: its licence is billed; os=linux drops it");
  }
}

Status ClassicMlDefaults(Workload* w) {
  if (w->features <= 0) {
    return Status::InvalidArgument(
        "features: classic-ml needs the number of features (columns) per row");
  }
  if (w->rows <= 0) {
    if (w->data_gb <= 0) {
      return Status::InvalidArgument(
          "rows: classic-ml needs the rows to train on or score (rows, or data_gb with "
          "features)");
    }
    // A CSV cell of a number is about 8 bytes with its separator.
    w->rows = w->data_gb * 1e9 / (w->features * 8);
    Assume(w, "rows", Count(w->rows),
           fmt::format("{} GB of CSV at about 8 bytes per value and {} features per row",
                       FormatNumber(w->data_gb, 2), Count(w->features)));
  }
  if (w->algorithm == MlAlgorithm::kGbdt && w->trees == 0) {
    w->trees = 100;
    Assume(w, "trees", "100",
           "the libraries' default boosting rounds (XGBoost n_estimators, LightGBM "
           "num_iterations: 100)");
  }
  if (w->algorithm == MlAlgorithm::kGbdt && w->tree_depth == 0) {
    w->tree_depth = 6;
    Assume(w, "tree_depth", "6", "XGBoost's default max_depth");
  }
  return Status::OK();
}

}  // namespace

Status ResolveAmountOfWork(Workload* w) {
  if (IsTraining(*w)) return ResolveTrainingAmount(w);
  if (w->kind == WorkloadKind::kInference) return ResolveInferenceAmount(w);
  return Status::OK();
}

Status ApplyWorkloadDefaults(const Catalog& catalog, Workload* w) {
  bool model_kind = !w->model.name.empty() || w->model.params > 0;
  if (model_kind && !w->was_given("precision") && w->kind != WorkloadKind::kQlora &&
      w->kind != WorkloadKind::kClassicMl) {
    Assume(w, "precision", std::string(NumericFormatName(w->precision)),
           IsTraining(*w) ? "bf16 mixed precision with fp32 master weights (fp16 on GPUs without "
                            "bf16); give precision"
                          : "16-bit weights; give precision (int8, int4 for quantised serving)");
  }
  Status s = ApplyRecipe(catalog, w);
  if (s.ok()) s = ResolveAmountOfWork(w);
  if (s.ok()) s = ApplyLoaderRate(catalog, w);
  if (!s.ok()) return s;
  if ((w->kind == WorkloadKind::kLora || w->kind == WorkloadKind::kQlora) &&
      !w->was_given("lora_rank")) {
    Assume(w, "lora_rank", std::to_string(w->lora_rank),
           "adapters of rank 16 on every linear layer");
  }
  switch (w->kind) {
    case WorkloadKind::kServing:
      ServingAssumptions(w);
      break;
    case WorkloadKind::kRealtimeRender:
    case WorkloadKind::kCad:
      StreamAssumptions(w);
      break;
    case WorkloadKind::kPreprocess:
      if (!w->was_given("per_core_mb_s")) {
        Assume(w, "per_core_mb_s", FormatNumber(w->per_core_mb_s, 0),
               "MB/s one vCPU processes (decode, transform, encode); measure with `cloudfit "
               "probe --path`");
      }
      break;
    case WorkloadKind::kClassicMl:
      if (Status c = ClassicMlDefaults(w); !c.ok()) return c;
      break;
    default:
      break;
  }
  if (w->os == OperatingSystem::kAuto) w->os = OperatingSystem::kLinux;
  return Status::OK();
}

}  // namespace cloudfit

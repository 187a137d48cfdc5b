// Turns the rows of shared/calibration into estimator cases. Each row's setting is read from its
// columns; where the source left something unstated, the assumption is written next to the rule
// that makes it, so a reader can disagree with it.
#include "cloudfit/calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <regex>

#include "cloudfit/estimate.h"
#include "util/csv.h"
#include "util/file.h"
#include "util/strings.h"
#include "util/validate.h"

namespace cloudfit {

namespace {

// Bits per weight of llama.cpp's Q4_K_M: the Llama-3-8B file is 4.92 GB for 8.03 B parameters
// (QuantFactory/Meta-Llama-3-8B-Instruct-GGUF), 4.9 bits.
constexpr double kQ4KMBitsPerWeight = 4.9;

// The workload of a llama-bench row (batch 1, layers split over GPUs in turn, FlashAttention
// off: its default in 2024) measuring `metric` at `seq_len` tokens (0: llama-bench's defaults)
// with weights in GGUF `precision`. False, with the family untouched, for a precision or
// metric it does not know.
bool LlamaBenchWorkload(const std::string& precision, const std::string& metric, long long seq_len,
                        bool unknown_precision_is_f16, MetricFamily* family,
                        std::vector<std::pair<std::string, std::string>>* fields) {
  // Bits per weight of ggml's block formats: Q4_0 packs 32 4-bit weights with an FP16 scale
  // (18 bytes), Q8_0 32 8-bit weights with one (34 bytes); Q4_K_M as measured above.
  struct Format {
    const char* name;
    const char* precision;
    double bits;
  };
  static const Format kFormats[] = {{"GGUF Q4_K_M", "int4", kQ4KMBitsPerWeight},
                                    {"GGUF Q4_0", "int4", 4.5},
                                    {"GGUF Q8_0", "int8", 8.5},
                                    {"GGUF F16", "fp16", 0}};
  const Format* format = nullptr;
  for (const Format& f : kFormats) {
    if (precision == f.name) format = &f;
  }
  if (format == nullptr && !unknown_precision_is_f16) return false;
  MetricFamily chosen;
  std::string prompt, output;
  if (metric == "decode_tokens_per_s") {
    chosen = MetricFamily::kLlmDecode;
    prompt = "1";
    output = std::to_string(seq_len > 0 ? seq_len : 128);
  } else if (metric == "prefill_tokens_per_s") {
    chosen = MetricFamily::kLlmPrefill;
    prompt = std::to_string(seq_len > 0 ? seq_len : 512);
    output = "1";
  } else if (metric.rfind("peak_gpu_memory", 0) == 0 || metric == "fits_in_gpu_memory") {
    chosen = MetricFamily::kFits;
    prompt = "512";
    output = "128";
  } else {
    return false;
  }
  fields->push_back({"kind", "inference"});
  fields->push_back({"software", "llama.cpp"});
  fields->push_back({"flash_attention", "false"});
  fields->push_back({"engine", "llama.cpp"});
  fields->push_back({"multi_gpu", "layers"});
  fields->push_back({"micro_batch", "1"});
  if (format != nullptr && format->bits > 0) {
    fields->push_back({"precision", format->precision});
    fields->push_back({"weight_bits", fmt::format("{}", format->bits)});
  } else {
    fields->push_back({"precision", "fp16"});
  }
  fields->push_back({"prompt_tokens", prompt});
  fields->push_back({"output_tokens", output});
  *family = chosen;
  return true;
}

// PEFT methods whose step does work that LoRA's does not, and that no workload kind expresses:
// DoRA normalises every adapted weight each step, LoHa, LoKr, OFT, BOFT and OSF build a
// full-size update or rotation of each adapted weight from their factors (BOFT through
// butterfly products: 5.7x LoRA's step on the L40S rows), AdaLoRA adds its SVD-style
// regularisation and rank allocation, and prompt tuning lengthens every sample by its virtual
// tokens. Their speed is not modelled; their memory, a frozen base with small adapters, is.
bool UnmodelledPeftStep(const std::string& name) {
  for (const char* prefix :
       {"loha/", "lokr/", "oft/", "boft/", "osf/", "adalora/", "prompt_tuning/"}) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  return name.find("-dora") != std::string::npos;
}

struct Loader {
  const Catalog& catalog;
  std::vector<CalibrationCase>* cases;
  std::vector<SkippedRow>* skipped;

  void Skip(const std::string& id, const std::string& reason) { skipped->push_back({id, reason}); }

  // Sets fields and finalizes; a failure is a skipped row with the reason.
  bool Finish(CalibrationCase c, const std::vector<std::pair<std::string, std::string>>& fields) {
    for (const auto& [k, v] : fields) {
      Status s = SetWorkloadField(&c.workload, k, v);
      if (!s.ok()) {
        Skip(c.id, s.message());
        return false;
      }
    }
    Status s = FinalizeWorkload(catalog, &c.workload);
    if (!s.ok()) {
      Skip(c.id, s.message());
      return false;
    }
    cases->push_back(std::move(c));
    return true;
  }
};

// "4x RTX 3090 24GB" -> 4, "RTX 3090 24GB".
bool SplitGpu(const std::string& text, int* count, std::string* name) {
  static const std::regex kPattern(R"(^(\d+)x (.*)$)");
  std::smatch m;
  if (!std::regex_match(text, m, kPattern)) return false;
  long long parsed = 0;  // not std::stoi: a count beyond int would throw out of the loader
  if (!ParseInt(m[1].str(), &parsed) || parsed < 1 || parsed > 1 << 20) return false;
  *count = static_cast<int>(parsed);
  *name = m[2].str();
  return true;
}

double MemoryUnitBytes(const std::string& unit) {
  std::string u = ToLower(unit);
  if (u == "gib") return 1024.0 * 1024 * 1024;
  if (u == "mib") return 1024.0 * 1024;
  if (u == "gb") return 1e9;
  return 0;
}

// Whether a memory figure is what PyTorch's caching allocator reports
// (torch.cuda.memory_reserved, memory_allocated or their peaks, as the row's metric or notes
// say): the allocator's pool holds the tensors and library workspaces but not the CUDA context.
bool AllocatorView(std::string_view metric, std::string_view notes) {
  for (std::string_view text : {metric, notes}) {
    for (std::string_view mark :
         {"memory_reserved", "memory_allocated", "RESERVED memory", "allocator view"}) {
      if (text.find(mark) != std::string_view::npos) return true;
    }
  }
  return false;
}

Status ReadTable(const std::string& path, CsvTable* table) {
  std::string text;
  Status s = ReadFile(path, &text);
  if (s.ok()) s = ParseCsv(text, path, CsvOptions(), table);
  return s;
}

// The fields every case has, from its row.
CalibrationCase NewCase(const std::string& path, const CsvRow& row, const CsvRowReader& r,
                        MetricFamily family) {
  CalibrationCase c;
  c.id = fmt::format("{}:{}", path.substr(path.rfind('/') + 1), row.line);
  c.source = r.Text("source");
  c.family = family;
  return c;
}

Status LoadTrainThroughput(Loader* loader, const std::string& path) {
  CsvTable table;
  Status s = ReadTable(path, &table);
  if (!s.ok()) return s;
  for (const CsvRow& row : table.rows) {
    CsvRowReader r(table, row);
    CalibrationCase c = NewCase(path, row, r, MetricFamily::kTrainingThroughput);
    c.gpu = r.Text("gpu");
    c.num_gpus = static_cast<int>(r.Number("num_gpus", 1, 1024));
    c.hardware.gpu = c.gpu;
    c.hardware.gpus = c.num_gpus;
    std::string model(r.Text("model"));
    c.measured = r.Number("value", 0, 1e12);
    std::string precision(r.Text("precision"));
    if (precision == "fp16_mixed") precision = "fp16";
    // The row's batch counts utterances, segments or sentence pairs, its throughput counts
    // frames, audio samples or tokens (what the zoo's FLOPs are per). Units per batch element:
    // WaveGlow segments are 8,000 samples (the task says so); LJSpeech clips average 6.57 s
    // (13,100 clips, 23.92 h: the dataset's README) = 566 mel frames at 22,050 Hz / hop 256;
    // a WMT16 en-de sentence pair is assumed to be 50 BPE tokens, source plus target. DLE's GNMT
    // counts real tokens but computes padded ones: its default bucketing (--batching bucketing,
    // --num-buckets 5 over --train-max-length 50: NVIDIA/DeepLearningExamples@0053b4b8:
    // PyTorch/Translation/GNMT/train.py) batches sentences whose source and target lengths fall
    // in the same 10-token classes, and each is padded to the longest of its batch, on average
    // (10 - 1) / 2 = 4.5 tokens a side, so a batch element of 25 + 25 computed positions holds
    // 25 / 29.5 of them as real tokens.
    constexpr double kGnmtRealTokensPerSide = 25, kGnmtPaddingPerSide = 4.5;
    double units = 1;
    if (model == "WaveGlow")
      units = 8000;
    else if (model == "Tacotron 2")
      units = 566;
    else if (model == "GNMT v2")
      units = 2 * kGnmtRealTokensPerSide * kGnmtRealTokensPerSide /
              (kGnmtRealTokensPerSide + kGnmtPaddingPerSide);
    int per_gpu = static_cast<int>(r.Number("batch_size_per_gpu", 1, 1e7));
    // The zoo's operators of these models describe one segment, utterance or sentence pair;
    // the rows count audio samples, mel frames and tokens.
    c.throughput_scale = units;
    std::vector<std::pair<std::string, std::string>> fields = {
        {"kind", "train"},
        {"model", model},
        {"precision", precision},
        {"micro_batch", std::to_string(per_gpu)},
        // NVIDIA's DeepLearningExamples of 2022 ran without FlashAttention, with plain
        // data-parallel (DDP/Horovod-style) training: every GPU holds the whole model and runs
        // the row's batch, so no tensor or pipeline split may stand in for data parallelism
        // (a split runs fewer samples per step than the row did).
        {"flash_attention", "false"},
        {"zero", "0"},
        {"tp", "1"},
        {"pp", "1"}};
    std::string notes(r.Text("notes"));
    // Lambda's harness (shared/calibration) has quirks of its own; other sources (NVIDIA's
    // DeepLearningExamples tables in tests/calibration) run the scripts as published.
    bool lambda = c.source.find("lambdal/") != std::string::npos;
    // Tacotron 2's rows are fitted like the others: DLE's train.py starts each step's clock after
    // the loader has handed over the batch (iter_start_time follows `for i, batch in
    // enumerate(train_loader)` and a synchronize; NVIDIA/DeepLearningExamples@5e3b487b:
    // PyTorch/SpeechSynthesis/Tacotron2/train.py), so the mel spectrograms the loader computes
    // are outside the figure. What the rows measure is a Python loop of ~870 decoder steps of
    // small kernels: host dispatch, which they inform.
    if (lambda && c.num_gpus > 1 && model.rfind("Transformer-XL", 0) == 0) {
      // Lambda's configs launch Transformer-XL without --multi_gpu ddp, and DLE's train.py then
      // trains the model unwrapped in each process (para_model = model): no gradient all-reduce.
      c.independent_replicas = true;
      c.assumption = "independent replicas: DLE Transformer-XL without --multi_gpu ddp";
    } else if (lambda && c.num_gpus > 1 && notes.find("_v2") == std::string::npos) {
      // The v1 harness's multi-GPU runs lose throughput in proportion to the gradient bytes,
      // unoverlapped, at a few GB/s on NVLink and PCIe systems alike: NCCL moving data through
      // host memory rather than peer to peer (as in a container without a shared IPC
      // namespace). The v2 runs (NGC 24.x) scale as their links allow.
      c.hardware.peer_to_peer = false;
      c.assumption = "Lambda v1 harness: NCCL through host memory (no peer to peer)";
    }
    // The harness's toolkit, from the notes ("NGC PyTorch 22.09/22.10 (PyTorch 1.13.0a0+d0d6b1f,
    // CUDA 11.8)"): what its cuBLAS and cuDNN can run on the row's GPU.
    static const std::regex kCuda(R"(CUDA (\d+\.\d+))");
    std::smatch cuda;
    double cuda_version = 0;
    if (std::regex_search(notes, cuda, kCuda) && ParseDouble(cuda[1].str(), &cuda_version)) {
      c.workload.cuda_version = cuda_version;
    }
    std::string task(r.Text("task"));
    static const std::regex kSeq(R"((?:seq_len|tgt_len) (\d+))");
    std::smatch m;
    if (std::regex_search(task, m, kSeq)) {
      fields.push_back({"seq_len", m[1].str()});
    } else if (model.rfind("Transformer-XL", 0) == 0) {
      // DLE's run_wt103_base.sh / run_wt103_large.sh segment lengths (tgt_len 192 and 256, the
      // values Lambda's configs pass to the same scripts).
      fields.push_back({"seq_len", model.find("large") != std::string::npos ? "256" : "192"});
    }
    // BERT's figure counts sequences; the estimate counts tokens.
    double seq_len = 0;
    if (ToLower(std::string(r.Text("unit"))) == "sequences/s" && !m.empty() &&
        ParseDouble(m[1].str(), &seq_len) && seq_len > 0) {
      c.throughput_scale = 1.0 / seq_len;
    }
    if (!r.status().ok()) {
      loader->Skip(c.id, r.status().message());
      continue;
    }
    loader->Finish(std::move(c), fields);
  }
  return Status::OK();
}

Status LoadLlmRows(Loader* loader, const std::string& path) {
  CsvTable table;
  Status s = ReadTable(path, &table);
  if (!s.ok()) return s;
  for (const CsvRow& row : table.rows) {
    CsvRowReader r(table, row);
    // The family is set below from the method and metric.
    CalibrationCase c = NewCase(path, row, r, MetricFamily::kTrainingThroughput);
    std::string method(r.Text("method"));
    std::string precision(r.Text("precision"));
    std::string metric(r.Text("metric"));
    std::string model(r.Text("model"));
    std::string gpu_text(r.Text("gpu"));
    std::string unit(r.Text("unit"));
    std::string seq(r.Text("seq_len"));
    c.measured = r.Number("value", 0, 1e12);
    if (!SplitGpu(gpu_text, &c.num_gpus, &c.gpu)) {
      loader->Skip(c.id, fmt::format("gpu '{}' is not '<N>x <GPU>'", Shown(gpu_text)));
      continue;
    }
    c.hardware.gpu = c.gpu;
    c.hardware.gpus = c.num_gpus;
    if (metric == "peak_cpu_memory") {
      loader->Skip(c.id, "host (CPU) memory is not estimated");
      continue;
    }
    if (method.find("CPU offload") != std::string::npos) {
      loader->Skip(c.id, "DeepSpeed ZeRO CPU offload is not modelled");
      continue;
    }
    std::vector<std::pair<std::string, std::string>> fields = {{"model", model}};
    long long seq_len = 0;
    bool has_seq = ParseInt(seq, &seq_len);
    if (method.find("llama.cpp") != std::string::npos) {
      // The shared table's llama.cpp rows are Q4_K_M or FP16, and its memory rows are read as
      // whether the run fitted.
      bool speed = metric == "decode_tokens_per_s" || metric == "prefill_tokens_per_s";
      LlamaBenchWorkload(precision, speed ? metric : "fits_in_gpu_memory", has_seq ? seq_len : 0,
                         true, &c.family, &fields);
    } else if (method.rfind("PEFT method_comparison", 0) == 0 &&
               metric == "peak_memory_reserved_incl_eval") {
      loader->Skip(c.id, "peak including evaluation-time generation: a different workload");
      continue;
    } else if (method.rfind("PEFT method_comparison", 0) == 0) {
      // MetaMathQA, batch 4, samples up to 768 tokens, bf16 weights, AdamW, no checkpointing.
      fields.push_back({"precision", "bf16"});
      fields.push_back({"micro_batch", "4"});
      fields.push_back({"seq_len", "768"});
      std::string name = method.substr(method.find(':') + 2);
      if (metric == "train_tokens_per_s" && UnmodelledPeftStep(name)) {
        loader->Skip(c.id, fmt::format("{}: the method's own per-step work is not modelled "
                                       "(no workload kind expresses it; its memory is)",
                                       name));
        continue;
      }
      static const std::regex kRank(R"(rank(\d+))");
      std::smatch m;
      // OSF updates every weight through an orthogonal subspace: its memory is a full fine-tune's.
      if (name.rfind("full-finetuning", 0) == 0 || name.rfind("osf", 0) == 0) {
        fields.push_back({"kind", "train"});
        fields.push_back({"master_weights", "false"});  // pure bf16: 34.8 GiB, not 16 B/param
      } else {
        // Every other method freezes the base and trains few parameters; modelled as LoRA of
        // the named rank (8 when none), an approximation for IA3, VeRA, prompt tuning and kin.
        fields.push_back({"kind", "lora"});
        fields.push_back({"lora_rank", std::regex_search(name, m, kRank) ? m[1].str() : "8"});
        fields.push_back(
            {"lora_targets", name.find("target-mlp") != std::string::npos ? "mlp" : "all"});
      }
      if (metric == "train_tokens_per_s")
        c.family = MetricFamily::kTrainingThroughput;
      else
        c.family = MetricFamily::kMemory;
    } else if (method.find("TRL SFTTrainer") != std::string::npos) {
      // Hugging Face's 4-bit blog (2023): batch 1, eager attention, fp16 compute on T4s.
      fields.push_back({"micro_batch", "1"});
      fields.push_back({"flash_attention", "false"});
      fields.push_back({"seq_len", std::to_string(has_seq ? seq_len : 512)});
      if (precision.find("int8") != std::string::npos) {
        fields.push_back({"kind", "lora"});
        fields.push_back({"precision", "int8"});
      } else {
        fields.push_back({"kind", "qlora"});
      }
      bool checkpointing =
          method.find("no GC") == std::string::npos && method.find("GC") != std::string::npos;
      fields.push_back({"recompute", checkpointing ? "full" : "none"});
      c.family = MetricFamily::kFits;
    } else {
      // PEFT README table: A100 80GB, dtype, batch and length not stated. Assumed as in the
      // PEFT examples of that time: fp32, batch 8, 64 tokens (twitter_complaints), 512 px and
      // batch 1 for DreamBooth.
      bool diffusion = model.find("diffusion") != std::string::npos;
      fields.push_back({"precision", "fp32"});
      fields.push_back({"micro_batch", diffusion ? "1" : "8"});
      if (!diffusion) fields.push_back({"seq_len", "64"});
      fields.push_back({"flash_attention", "false"});
      fields.push_back({"kind", method.find("LoRA") != std::string::npos ? "lora" : "train"});
      if (method.find("gradient checkpointing") != std::string::npos) {
        fields.push_back({"recompute", "full"});
      }
      c.family = metric == "fits_in_gpu_memory" ? MetricFamily::kFits : MetricFamily::kMemory;
    }
    if (c.family == MetricFamily::kMemory) {
      double unit_bytes = MemoryUnitBytes(unit);
      if (unit_bytes == 0) {
        loader->Skip(c.id, fmt::format("memory unit '{}' is not GB, GiB or MiB", Shown(unit)));
        continue;
      }
      c.measured *= unit_bytes;
      c.allocator_view = AllocatorView(metric, r.Text("notes"));
    }
    if (!r.status().ok()) {
      loader->Skip(c.id, r.status().message());
      continue;
    }
    loader->Finish(std::move(c), fields);
  }
  return Status::OK();
}

// Model FLOPs per token as MosaicML, Korthikanti et al. and Llama 3 count them for MFU:
// 6 x (non-embedding parameters + the output layer) + 12 x layers x hidden x sequence.
double ModelFlopsPerToken(const Model& m, double seq) {
  double non_embedding = m.params - static_cast<double>(m.vocab) * m.hidden;
  return 6 * non_embedding + 12.0 * m.layers * m.hidden * seq;
}

Status LoadLargeModelRows(Loader* loader, const std::string& path) {
  CsvTable table;
  Status s = ReadTable(path, &table);
  if (!s.ok()) return s;
  for (const CsvRow& row : table.rows) {
    CsvRowReader r(table, row);
    CalibrationCase c = NewCase(path, row, r, MetricFamily::kLargeModelTraining);
    c.gpu = r.Text("gpu");
    c.num_gpus = static_cast<int>(r.Number("num_gpus", 1, 1e6));
    // Eight GPUs per node (DGX/HGX systems).
    c.hardware.gpu = c.gpu;
    c.hardware.gpus = std::min(8, c.num_gpus);
    c.hardware.nodes = std::max(1, c.num_gpus / 8);
    c.measured = r.Number("value", 0, 1e9);
    std::string metric(r.Text("metric"));
    std::vector<std::pair<std::string, std::string>> fields = {{"kind", "train"}};
    for (const char* column :
         {"params_b", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "seq_len",
          "precision", "micro_batch", "recompute", "flash_attention"}) {
      std::string value(r.Text(column));
      if (!value.empty()) fields.push_back({column, value});
    }
    std::string global(r.Text("global_batch"));
    if (!global.empty()) fields.push_back({"batch", global});
    std::string tp(r.Text("tensor_parallel")), pp(r.Text("pipeline_parallel"));
    if (!tp.empty()) fields.push_back({"tp", tp});
    if (!pp.empty()) fields.push_back({"pp", pp});
    // Sharded data parallel (FSDP) where there is no tensor or pipeline parallelism.
    if ((tp.empty() || tp == "1") && (pp.empty() || pp == "1")) fields.push_back({"zero", "3"});
    if (!r.status().ok()) {
      loader->Skip(c.id, r.status().message());
      continue;
    }
    if (!loader->Finish(std::move(c), fields)) continue;
    CalibrationCase& added = loader->cases->back();
    const Model& m = added.workload.model;
    double per_gpu = 1.0 / added.num_gpus;
    double flops = ModelFlopsPerToken(m, added.workload.seq_len);
    // Narayanan et al. 2021 count the recomputed forward pass in their FLOP/s.
    if (added.source.find("2104.04473") != std::string::npos) flops *= 4.0 / 3;
    const Accelerator* gpu = nullptr;
    double peak = 0;
    if (loader->catalog.FindAccelerator(added.gpu, &gpu).ok()) {
      Precision p =
          added.workload.precision == NumericFormat::kFp8 ? Precision::kFp8 : Precision::kBf16;
      peak = gpu->peak(p).value_or(0);
    }
    if (metric == "tokens_per_s_per_gpu")
      added.throughput_scale = per_gpu;
    else if (metric == "model_tflops_per_gpu")
      added.throughput_scale = per_gpu * flops / 1e12;
    else if (metric == "mfu" && peak > 0)
      added.throughput_scale = per_gpu * flops / peak;
    else {
      loader->Skip(added.id, fmt::format("metric '{}' is not modelled", Shown(metric)));
      loader->cases->pop_back();
    }
  }
  return Status::OK();
}

// Rows in the workload-fields format of tests/calibration/finetune_memory.csv: `gpu` as
// "<N>x <GPU>", `metric`, `value`, `unit`, and one column per workload field the row sets.
Status LoadWorkloadFieldRows(Loader* loader, const std::string& path) {
  CsvTable table;
  Status s = ReadTable(path, &table);
  if (!s.ok()) return s;
  s = table.RequireColumns({"source", "gpu", "metric", "value", "unit"});
  if (!s.ok()) return s;
  std::vector<std::string> field_columns;
  for (const WorkloadField& f : WorkloadFields()) {
    if (table.ColumnIndex(f.name) >= 0) field_columns.push_back(f.name);
  }
  for (const CsvRow& row : table.rows) {
    CsvRowReader r(table, row);
    CalibrationCase c = NewCase(path, row, r, MetricFamily::kMemory);
    c.held_out = true;
    c.fitted = false;
    std::string gpu_text(r.Text("gpu"));
    if (!SplitGpu(gpu_text, &c.num_gpus, &c.gpu)) {
      loader->Skip(c.id, fmt::format("gpu '{}' is not '<N>x <GPU>'", Shown(gpu_text)));
      continue;
    }
    c.hardware.gpu = c.gpu;
    c.hardware.gpus = c.num_gpus;
    c.hardware.nodes = static_cast<int>(r.OptionalNumber("nodes", 1, 100000).value_or(1));
    std::string metric(r.Text("metric"));
    c.measured = r.Number("value", 0, 1e15);
    std::string method(r.Text("method"));
    if (method.find("llama.cpp (llama-bench)") != std::string::npos) {
      // A llama-bench row names its weights' GGUF format and its test, not workload fields.
      std::vector<std::pair<std::string, std::string>> fields = {
          {"model", std::string(r.Text("model"))}};
      std::string precision(r.Text("precision"));
      // The test's length (llama-bench's -p or -n); absent, its defaults.
      std::optional<double> seq_len = r.OptionalNumber("seq_len", 1, 1 << 20);
      if (!r.status().ok()) {
        loader->Skip(c.id, r.status().message());
        continue;
      }
      bool speed = metric == "decode_tokens_per_s" || metric == "prefill_tokens_per_s";
      if (!speed ||
          !LlamaBenchWorkload(precision, metric, static_cast<long long>(seq_len.value_or(0)), false,
                              &c.family, &fields)) {
        loader->Skip(c.id,
                     speed ? fmt::format("llama-bench weights '{}' are not a GGUF format "
                                         "this version reads (F16, Q8_0, Q4_0, Q4_K_M)",
                                         Shown(precision))
                           : fmt::format("llama-bench metric '{}' is not modelled", Shown(metric)));
        continue;
      }
      loader->Finish(std::move(c), fields);
      continue;
    }
    if (!method.empty()) {
      // Read without its method, a fine-tuning row would be scored as some other workload.
      loader->Skip(c.id, fmt::format("method '{}' is not a workload field (finetune_memory.csv "
                                     "restates such rows as fields)",
                                     Shown(method)));
      continue;
    }
    if (metric.rfind("peak_gpu_memory", 0) == 0) {
      double unit_bytes = MemoryUnitBytes(std::string(r.Text("unit")));
      if (unit_bytes == 0) {
        loader->Skip(c.id, "memory unit is not GB, GiB or MiB");
        continue;
      }
      c.measured *= unit_bytes;
      c.allocator_view = AllocatorView(metric, r.Text("notes"));
    } else if (metric == "fits_in_gpu_memory") {
      c.family = MetricFamily::kFits;
    } else if (metric == "train_tokens_per_s" || metric == "train_samples_per_s") {
      c.family = MetricFamily::kTrainingThroughput;
    } else if (metric == "decode_tokens_per_s") {
      c.family = MetricFamily::kLlmDecode;
    } else {
      loader->Skip(c.id, fmt::format("metric '{}' is not modelled", Shown(metric)));
      continue;
    }
    std::vector<std::pair<std::string, std::string>> fields;
    for (const std::string& column : field_columns) {
      std::string value(r.Text(column));
      if (!value.empty()) fields.push_back({column, value});
    }
    if (!r.status().ok()) {
      loader->Skip(c.id, r.status().message());
      continue;
    }
    loader->Finish(std::move(c), fields);
  }
  return Status::OK();
}

}  // namespace

Status LoadExtraCases(const Catalog& catalog, const std::string& path,
                      std::vector<CalibrationCase>* cases, std::vector<SkippedRow>* skipped) {
  Loader loader{catalog, cases, skipped};
  CsvTable table;
  Status s = ReadTable(path, &table);
  if (!s.ok()) return s;
  size_t before = cases->size();
  if (table.ColumnIndex("batch_size_per_gpu") >= 0) {
    s = LoadTrainThroughput(&loader, path);
  } else if (table.ColumnIndex("tensor_parallel") >= 0) {
    s = LoadLargeModelRows(&loader, path);
  } else if (table.ColumnIndex("metric") >= 0 && table.ColumnIndex("gpu") >= 0) {
    s = LoadWorkloadFieldRows(&loader, path);
  } else {
    return Status::InvalidArgument(path +
                                   ": not a calibration table this version reads (no "
                                   "batch_size_per_gpu, tensor_parallel or metric column)");
  }
  // Rows from tests/calibration are a check of generality: scored, never fitted.
  for (size_t i = before; i < cases->size(); ++i) {
    (*cases)[i].held_out = true;
    (*cases)[i].fitted = false;
  }
  return s;
}

Status LoadCalibrationCases(const Catalog& catalog, const std::string& dir,
                            std::vector<CalibrationCase>* cases, std::vector<SkippedRow>* skipped) {
  Loader loader{catalog, cases, skipped};
  std::string train = dir + "/train_throughput.csv";
  std::string llm = dir + "/llm_memory_and_speed.csv";
  Status s = LoadTrainThroughput(&loader, train);
  if (s.ok()) s = LoadLlmRows(&loader, llm);
  return s;
}

Status LoadLargeModelCases(const Catalog& catalog, const std::string& path,
                           std::vector<CalibrationCase>* cases, std::vector<SkippedRow>* skipped) {
  Loader loader{catalog, cases, skipped};
  return LoadLargeModelRows(&loader, path);
}

}  // namespace cloudfit

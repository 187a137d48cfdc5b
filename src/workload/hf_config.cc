#include "cloudfit/hf_config.h"

#include <climits>
#include <cmath>
#include <filesystem>
#include <optional>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "util/file.h"
#include "util/strings.h"
#include "util/validate.h"

namespace cloudfit {

namespace {

// The largest size, count or width a config.json may state: 2^24 = 16,777,216. Real configs stay
// far below (vocabularies of 256k, widths of 53,248, 10M positions for Llama 4 Scout), and the
// estimator multiplies these numbers together, so a bound this far inside int keeps every
// product of two of them finite and every one of them exact.
constexpr int kMaxConfigInteger = 1 << 24;

// Reads fields of a config.json and keeps the first error, so that the builders below can read
// every field top to bottom and check once. A failed read returns a harmless value (0, the
// fallback), which the builders never use before checking status().
class ConfigReader {
 public:
  explicit ConfigReader(const nlohmann::json& config) : config_(config) {}

  // A positive integer that must be present.
  int Required(const char* key) { return Integer(key, std::nullopt); }
  // A positive integer, or `fallback` when the key is absent or null (how transformers writes
  // "use the default", e.g. gpt2's n_inner).
  int Optional(const char* key, int fallback) { return Integer(key, fallback); }

  bool Bool(const char* key, bool fallback) {
    const nlohmann::json* v = Find(key);
    if (v == nullptr) return fallback;
    if (!v->is_boolean()) {
      Fail(fmt::format("config.json: field '{}' must be true or false (got {})", key, Show(*v)));
      return fallback;
    }
    return v->get<bool>();
  }

  std::string Text(const char* key, std::optional<std::string> fallback) {
    const nlohmann::json* v = Find(key);
    if (v == nullptr) {
      if (fallback) return *fallback;
      Fail(fmt::format("config.json: field '{}' is missing", key));
      return "";
    }
    if (!v->is_string()) {
      Fail(fmt::format("config.json: field '{}' must be a string (got {})", key, Show(*v)));
      return fallback.value_or("");
    }
    return v->get<std::string>();
  }

  // A list of layer indices (qwen2_moe's mlp_only_layers); empty when absent.
  std::set<int> IndexSet(const char* key) {
    std::set<int> out;
    const nlohmann::json* v = Find(key);
    if (v == nullptr) return out;
    bool valid = v->is_array();
    if (valid) {
      for (const nlohmann::json& item : *v) {
        if (!item.is_number_integer() || item.get<int64_t>() < 0 || item.get<int64_t>() > INT_MAX) {
          valid = false;
          break;
        }
        out.insert(static_cast<int>(item.get<int64_t>()));
      }
    }
    if (!valid) {
      Fail(fmt::format("config.json: field '{}' must be a list of layer indices (got {})", key,
                       Show(*v)));
    }
    return out;
  }

  void Fail(std::string message) {
    if (status_.ok()) status_ = Status::InvalidArgument(std::move(message));
  }
  const Status& status() const { return status_; }

 private:
  const nlohmann::json* Find(const char* key) const {
    auto it = config_.find(key);
    if (it == config_.end() || it->is_null()) return nullptr;
    return &*it;
  }

  int Integer(const char* key, std::optional<int> fallback) {
    const nlohmann::json* v = Find(key);
    if (v == nullptr) {
      if (fallback) return *fallback;
      Fail(fmt::format("config.json: field '{}' is missing", key));
      return 0;
    }
    // Python writes integers without a fraction, but 4096.0 means the same and is accepted.
    double d = v->is_number() ? v->get<double>() : 0;
    if (!v->is_number() || v->is_boolean() || !std::isfinite(d) || d != std::floor(d) || d < 1 ||
        d > kMaxConfigInteger) {
      Fail(fmt::format("config.json: field '{}' must be a positive integer{} (got {})", key,
                       d > kMaxConfigInteger ? fmt::format(" up to {}", kMaxConfigInteger) : "",
                       Show(*v)));
      return fallback.value_or(0);
    }
    return static_cast<int>(d);
  }

  // The value as JSON text for a message; replace, not throw, on invalid UTF-8.
  static std::string Show(const nlohmann::json& v) {
    std::string text = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return text.size() > 40 ? text.substr(0, 37) + "..." : text;
  }

  const nlohmann::json& config_;
  Status status_;
};

// Parameter counts are kept in double: exact to 2^53, far beyond any real model, and a hostile
// config with huge widths yields a huge number rather than integer overflow.
double GatedMlp(double hidden, double ffn) { return 3 * hidden * ffn; }  // gate, up, down

// The Llama-style decoders: RMSNorm, rotary positions (no position embedding), a gated MLP and
// optional grouped-query attention. They differ in biases, norms and how the MLP is split into
// experts.
enum class Experts { kNone, kMixtral, kQwenMoe };
struct DecoderArch {
  const char* model_type;
  bool qkv_bias;         // qwen2 and qwen2_moe: q, k, v carry biases whatever the config says
  int norms_per_layer;   // 2; gemma2 adds a norm before and after the MLP, 4
  bool tied_by_default;  // transformers' default for tie_word_embeddings
  Experts experts;
};

constexpr DecoderArch kDecoders[] = {
    {"llama", false, 2, false, Experts::kNone},
    {"mistral", false, 2, false, Experts::kNone},
    {"mixtral", false, 2, false, Experts::kMixtral},
    {"qwen2", true, 2, false, Experts::kNone},
    {"qwen2_moe", true, 2, false, Experts::kQwenMoe},
    {"gemma", false, 2, true, Experts::kNone},
    {"gemma2", false, 4, true, Experts::kNone},
    // phi3 fuses q/k/v into one projection and gate/up into another; the counts are the same.
    {"phi3", false, 2, false, Experts::kNone},
};

Status DecoderFromConfig(const DecoderArch& arch, ConfigReader& r, Model* m) {
  const int hidden = r.Required("hidden_size");
  const int layers = r.Required("num_hidden_layers");
  const int heads = r.Required("num_attention_heads");
  const int vocab = r.Required("vocab_size");
  const int kv_heads = r.Optional("num_key_value_heads", heads);
  const int config_head_dim = r.Optional("head_dim", 0);  // 0: hidden / heads
  const int context = r.Optional("max_position_embeddings", 0);
  const bool tied = r.Bool("tie_word_embeddings", arch.tied_by_default);
  // llama and gemma can switch on biases everywhere in attention, llama in the MLP too.
  const bool attention_bias = r.Bool("attention_bias", false);
  const bool mlp_bias = r.Bool("mlp_bias", false);
  const int ffn = r.Required("intermediate_size");  // dense MLP width
  int experts = 0, experts_per_token = 0, expert_ffn = 0, shared_ffn = 0, sparse_step = 1;
  std::set<int> dense_layers;
  const char* experts_key = "";
  if (arch.experts == Experts::kMixtral) {
    experts_key = "num_local_experts";
    experts = r.Required(experts_key);
    experts_per_token = r.Required("num_experts_per_tok");
    expert_ffn = ffn;
  } else if (arch.experts == Experts::kQwenMoe) {
    experts_key = "num_experts";
    experts = r.Required(experts_key);
    experts_per_token = r.Required("num_experts_per_tok");
    expert_ffn = r.Required("moe_intermediate_size");
    shared_ffn = r.Required("shared_expert_intermediate_size");
    sparse_step = r.Optional("decoder_sparse_step", 1);
    dense_layers = r.IndexSet("mlp_only_layers");
  }
  if (!r.status().ok()) return r.status();

  if (heads % kv_heads != 0) {
    return Status::InvalidArgument(fmt::format(
        "config.json: num_attention_heads ({}) must be a multiple of num_key_value_heads ({})",
        heads, kv_heads));
  }
  if (config_head_dim == 0 && hidden % heads != 0) {
    return Status::InvalidArgument(fmt::format(
        "config.json: hidden_size ({}) must be a multiple of num_attention_heads ({}) when "
        "head_dim is not given",
        hidden, heads));
  }
  if (experts_per_token > experts) {
    return Status::InvalidArgument(
        fmt::format("config.json: num_experts_per_tok ({}) must not exceed {} ({})",
                    experts_per_token, experts_key, experts));
  }
  const double h = hidden;
  const double head_dim = config_head_dim != 0 ? config_head_dim : hidden / heads;
  const double q_width = heads * head_dim, kv_width = kv_heads * head_dim;

  double attention = h * q_width + 2 * h * kv_width + q_width * h;  // q, k, v, o
  if (arch.qkv_bias || attention_bias) attention += q_width + 2 * kv_width;
  if (attention_bias) attention += h;
  const double dense_mlp = GatedMlp(h, ffn) + (mlp_bias ? 2.0 * ffn + h : 0);
  const double per_layer_fixed = attention + arch.norms_per_layer * h;

  // Which layers route to experts: all of them for mixtral; for qwen2_moe every
  // decoder_sparse_step-th layer that mlp_only_layers does not pin to a dense MLP. Counted, not
  // looped over, so an absurd num_hidden_layers costs nothing.
  int sparse_layers = 0;
  if (arch.experts == Experts::kMixtral) {
    sparse_layers = layers;
  } else if (arch.experts == Experts::kQwenMoe) {
    sparse_layers = layers / sparse_step;
    for (int layer : dense_layers) {
      if (layer < layers && (layer + 1) % sparse_step == 0) --sparse_layers;
    }
  }
  const double expert = GatedMlp(h, expert_ffn);
  double sparse_mlp = experts * expert + h * experts;  // experts and router
  // qwen2_moe adds a shared expert every token passes through, behind a one-output gate.
  if (arch.experts == Experts::kQwenMoe) sparse_mlp += GatedMlp(h, shared_ffn) + h;

  double total = vocab * h + h;   // token embeddings, final norm
  if (!tied) total += vocab * h;  // LM head
  total += layers * per_layer_fixed + sparse_layers * sparse_mlp +
           (static_cast<double>(layers) - sparse_layers) * dense_mlp;
  // Expert weights a token does not pass through.
  const double inactive = sparse_layers * (experts - experts_per_token) * expert;

  m->family = arch.experts == Experts::kNone ? "decoder" : "moe";
  m->layers = layers;
  m->hidden = hidden;
  m->heads = heads;
  m->kv_heads = kv_heads;
  m->ffn_hidden = arch.experts == Experts::kNone ? ffn : expert_ffn;  // per expert for MoE
  m->vocab = vocab;
  m->context = context;
  m->experts = experts;
  m->experts_per_token = experts_per_token;
  m->tied_embeddings = tied;
  m->params = total;
  m->active_params = total - inactive;
  return Status::OK();
}

// GPT-2: learned positions, pre-LayerNorm, biases on every linear layer, a plain GELU MLP, and
// q/k/v fused in one Conv1D (same count as three).
Status Gpt2FromConfig(ConfigReader& r, Model* m) {
  const int hidden = r.Required("n_embd");
  const int layers = r.Required("n_layer");
  const int heads = r.Required("n_head");
  const int vocab = r.Required("vocab_size");
  const int positions = r.Optional("n_positions", 1024);
  const bool tied = r.Bool("tie_word_embeddings", true);
  if (!r.status().ok()) return r.status();
  if (hidden % heads != 0) {
    return Status::InvalidArgument(
        fmt::format("config.json: n_embd ({}) must be a multiple of n_head ({})", hidden, heads));
  }
  // n_inner is null in the published configs, meaning 4 * n_embd; read it after n_embd is known.
  const int ffn = r.Optional("n_inner", hidden > INT_MAX / 4 ? INT_MAX : 4 * hidden);
  if (!r.status().ok()) return r.status();

  const double h = hidden;
  const double per_layer = 2 * (2 * h)            // ln_1, ln_2
                           + (h * 3 * h + 3 * h)  // c_attn
                           + (h * h + h)          // attention c_proj
                           + (h * ffn + ffn)      // mlp c_fc
                           + (ffn * h + h);       // mlp c_proj
  // Token and position embeddings, the layers, ln_f.
  double total = vocab * h + positions * h + layers * per_layer + 2 * h;
  if (!tied) total += vocab * h;

  m->family = "decoder";
  m->layers = layers;
  m->hidden = hidden;
  m->heads = heads;
  m->kv_heads = heads;
  m->ffn_hidden = ffn;
  m->vocab = vocab;
  m->context = positions;
  m->tied_embeddings = tied;
  m->params = m->active_params = total;
  return Status::OK();
}

// BERT and RoBERTa: word, position and token-type embeddings, post-LayerNorm, biases everywhere,
// a plain GELU MLP. Counted as the base model with its pooler, the figure publishers quote
// (109.5M for bert-base-uncased); the masked-LM head shares the word embeddings.
Status BertFromConfig(bool roberta, ConfigReader& r, Model* m) {
  const int hidden = r.Required("hidden_size");
  const int layers = r.Required("num_hidden_layers");
  const int heads = r.Required("num_attention_heads");
  const int ffn = r.Required("intermediate_size");
  const int vocab = r.Required("vocab_size");
  const int positions = r.Optional("max_position_embeddings", 512);
  const int token_types = r.Optional("type_vocab_size", 2);
  const bool tied = r.Bool("tie_word_embeddings", true);
  if (!r.status().ok()) return r.status();
  if (hidden % heads != 0) {
    return Status::InvalidArgument(
        fmt::format("config.json: hidden_size ({}) must be a multiple of num_attention_heads ({})",
                    hidden, heads));
  }
  const double h = hidden;
  const double per_layer = 4 * (h * h + h)    // q, k, v, attention output
                           + 2 * h            // attention LayerNorm
                           + (h * ffn + ffn)  // intermediate
                           + (ffn * h + h)    // output
                           + 2 * h;           // output LayerNorm
  const double embeddings = (static_cast<double>(vocab) + positions + token_types) * h + 2 * h;
  const double pooler = h * h + h;

  m->family = "encoder";
  m->layers = layers;
  m->hidden = hidden;
  m->heads = heads;
  m->kv_heads = heads;
  m->ffn_hidden = ffn;
  m->vocab = vocab;
  // RoBERTa numbers positions from padding_idx + 1 = 2, so 514 slots hold 512 tokens.
  m->context = roberta && positions > 2 ? positions - 2 : positions;
  m->tied_embeddings = tied;
  m->params = m->active_params = embeddings + layers * per_layer + pooler;
  return Status::OK();
}

// T5 and mT5: a shared embedding, encoder and decoder stacks (the decoder adds cross-attention),
// RMS-style LayerNorm without bias, no biases in linear layers, relative attention bias in the
// first layer of each stack. heads * d_kv need not equal d_model (t5-3b, t5-11b). v1.0 uses a
// ReLU MLP and ties the LM head; v1.1 and mT5 use gated-gelu and an untied head.
Status T5FromConfig(ConfigReader& r, Model* m) {
  const int d_model = r.Required("d_model");
  const int layers = r.Required("num_layers");
  const int heads = r.Required("num_heads");
  const int d_kv = r.Required("d_kv");
  const int d_ff = r.Required("d_ff");
  const int vocab = r.Required("vocab_size");
  const int decoder_layers = r.Optional("num_decoder_layers", layers);
  const int buckets = r.Optional("relative_attention_num_buckets", 32);
  const int positions = r.Optional("n_positions", 512);  // training length, not a hard limit
  const std::string projection = r.Text("feed_forward_proj", "relu");
  const bool tied = r.Bool("tie_word_embeddings", true);
  if (!r.status().ok()) return r.status();
  // transformers accepts "ACT" or "gated-ACT" and nothing else.
  const bool gated = projection.rfind("gated-", 0) == 0;
  const std::string activation = gated ? projection.substr(6) : projection;
  if (activation.empty() || activation.find('-') != std::string::npos) {
    return Status::InvalidArgument(fmt::format(
        "config.json: field 'feed_forward_proj' must be 'ACT' or 'gated-ACT' (got '{}')",
        projection));
  }
  const double h = d_model;
  const double inner = static_cast<double>(heads) * d_kv;
  const double attention = 3 * h * inner + inner * h;  // q, k, v, o
  const double mlp = (gated ? 3 : 2) * h * d_ff;       // wi (wi_0, wi_1 when gated), wo
  const double encoder = layers * (attention + mlp + 2 * h) + h + buckets * heads;
  const double decoder = decoder_layers * (2 * attention + mlp + 3 * h) + h + buckets * heads;
  double total = vocab * h + encoder + decoder;
  if (!tied) total += vocab * h;

  m->family = "encoder-decoder";
  m->layers = layers;  // per stack, as in data/models.csv
  m->hidden = d_model;
  m->heads = heads;
  m->kv_heads = heads;
  m->ffn_hidden = d_ff;
  m->vocab = vocab;
  m->context = positions;
  m->tied_embeddings = tied;
  m->params = m->active_params = total;
  return Status::OK();
}

const char* const kSupported =
    "llama, mistral, mixtral, qwen2, qwen2_moe, gemma, gemma2, phi3, gpt2, bert, roberta, t5, mt5";

}  // namespace

Status ModelFromHfConfig(const nlohmann::json& config, const std::string& name, Model* out) {
  if (!config.is_object()) {
    return Status::InvalidArgument("config.json: expected a JSON object at the top level");
  }
  ConfigReader r(config);
  const std::string type = r.Text("model_type", std::nullopt);
  if (!r.status().ok()) return r.status();

  Model m;
  Status s;
  const DecoderArch* decoder = nullptr;
  for (const DecoderArch& arch : kDecoders) {
    if (type == arch.model_type) decoder = &arch;
  }
  if (decoder != nullptr) {
    s = DecoderFromConfig(*decoder, r, &m);
  } else if (type == "gpt2") {
    s = Gpt2FromConfig(r, &m);
  } else if (type == "bert" || type == "roberta") {
    s = BertFromConfig(type == "roberta", r, &m);
  } else if (type == "t5" || type == "mt5") {
    s = T5FromConfig(r, &m);
  } else {
    return Status::InvalidArgument(fmt::format(
        "config.json: model_type '{}' is not supported; supported: {}", type, kSupported));
  }
  if (!s.ok()) return s;
  m.name = name;
  m.source = "config.json";
  m.notes = "computed from config.json (model_type " + type + ")";
  *out = std::move(m);
  return Status::OK();
}

Status LoadHfConfigFile(const std::string& path, Model* out) {
  std::string text;
  Status s = ReadFile(path, &text, kMaxDocumentBytes);
  if (!s.ok()) return s;
  nlohmann::json config;
  // The message names the byte where parsing stopped.
  s = ParseJson(path, text, kMaxDocumentBytes, &config, "not valid JSON");
  if (!s.ok()) return Status::Corruption(s.message());

  namespace fs = std::filesystem;
  std::string name;
  if (config.is_object()) {
    auto it = config.find("_name_or_path");
    if (it != config.end() && it->is_string() && CheckName("", it->get<std::string>()).ok()) {
      name = it->get<std::string>();
    }
  }
  if (name.empty()) {
    // lexically_normal() turns "./config.json" into "config.json" so it has no bogus parent.
    const fs::path p = fs::path(path).lexically_normal();
    if (p.filename() == "config.json") {
      std::error_code ec;
      const fs::path absolute = fs::absolute(p, ec);
      name = (ec ? p : absolute).parent_path().filename().string();
    } else {
      name = p.stem().string();
    }
  }

  Model m;
  s = ModelFromHfConfig(config, name, &m);
  if (!s.ok()) return Status::InvalidArgument(path + ": " + s.message());
  m.source = path;
  *out = std::move(m);
  return Status::OK();
}

}  // namespace cloudfit

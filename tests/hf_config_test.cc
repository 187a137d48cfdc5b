// Reading Hugging Face config.json files: the fixtures under tests/fixtures/hf copy the shape keys
// of the published configs, and the computed parameter counts must land on what the publishers
// state (and, where it is known, on the exact count transformers reports).
#include "cloudfit/hf_config.h"

#include <string>

#include <gtest/gtest.h>

#include "util/file.h"
#include "test_support.h"

namespace cloudfit {
namespace {

using testing::SourcePath;
using testing::TempDir;

std::string FixturePath(const std::string& name) {
  return SourcePath("tests/fixtures/hf/" + name + ".json");
}

nlohmann::json Fixture(const std::string& name) {
  std::string text;
  Status s = ReadFile(FixturePath(name), &text);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

Model Load(const std::string& name) {
  Model m;
  Status s = LoadHfConfigFile(FixturePath(name), &m);
  EXPECT_TRUE(s.ok()) << name << ": " << s.ToString();
  return m;
}

// The error from ModelFromHfConfig, with a check that it is an InvalidArgument.
std::string ErrorFor(const nlohmann::json& config) {
  Model m;
  Status s = ModelFromHfConfig(config, "broken", &m);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << s.ToString();
  return s.message();
}

// Published parameter counts: what the model card or paper states, and where it is known, the
// exact count of the transformers model (sum of numel over unique parameters).
struct Published {
  const char* fixture;
  double params;
  double tolerance;  // relative
  double exact;      // 0 where not asserted
};

TEST(HfConfigTest, ParamsMatchWhatPublishersState) {
  const Published cases[] = {
      {"Llama-3.1-8B", 8.03e9, 0.005, 8030261248},
      {"Mistral-7B-v0.1", 7.24e9, 0.005, 7241732096},
      {"Mixtral-8x7B-v0.1", 46.7e9, 0.005, 46702792704},
      {"Qwen2.5-0.5B", 0.49e9, 0.02, 494032768},
      {"Qwen1.5-MoE-A2.7B", 14.3e9, 0.01, 0},
      {"gemma-2-9b", 9.24e9, 0.005, 9241705984},
      {"Phi-3-mini-4k-instruct", 3.82e9, 0.005, 3821079552},
      {"gpt2", 124.4e6, 0.01, 124439808},               // GPT2LMHeadModel, head tied
      {"bert-base-uncased", 109.5e6, 0.01, 109482240},  // BertModel with pooler
      {"roberta-base", 124.6e6, 0.01, 124645632},       // RobertaModel with pooler ("125M")
      {"t5-base", 222.9e6, 0.02, 222903552},            // v1.0, LM head tied to shared
      {"flan-t5-base", 247.6e6, 0.01, 247577856},       // v1.1 shape: gated-gelu, untied ("248M")
  };
  for (const Published& c : cases) {
    Model m = Load(c.fixture);
    EXPECT_NEAR(m.params, c.params, c.params * c.tolerance) << c.fixture;
    if (c.exact != 0) {
      EXPECT_EQ(m.params, c.exact) << c.fixture;
    }
    if (m.family != "moe") {
      EXPECT_EQ(m.active_params, m.params) << c.fixture;
    }
  }
}

TEST(HfConfigTest, Llama31FillsEveryArchitectureField) {
  Model m = Load("Llama-3.1-8B");
  EXPECT_EQ(m.name, "Llama-3.1-8B");  // the fixture's file name; config.json uses its directory
  EXPECT_EQ(m.family, "decoder");
  EXPECT_EQ(m.layers, 32);
  EXPECT_EQ(m.hidden, 4096);
  EXPECT_EQ(m.heads, 32);
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.ffn_hidden, 14336);
  EXPECT_EQ(m.vocab, 128256);
  EXPECT_EQ(m.context, 131072);
  EXPECT_EQ(m.experts, 0);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_EQ(m.source, FixturePath("Llama-3.1-8B"));
  EXPECT_EQ(m.notes, "computed from config.json (model_type llama)");
}

TEST(HfConfigTest, MixtralCountsEveryExpertButActivatesTwo) {
  Model m = Load("Mixtral-8x7B-v0.1");
  EXPECT_EQ(m.family, "moe");
  EXPECT_EQ(m.experts, 8);
  EXPECT_EQ(m.experts_per_token, 2);
  EXPECT_EQ(m.ffn_hidden, 14336);  // per expert
  EXPECT_NEAR(m.params, 46.7e9, 46.7e9 * 0.005);
  EXPECT_NEAR(m.active_params, 12.9e9, 12.9e9 * 0.005);
  // Total minus six idle SwiGLU experts in each of 32 layers.
  EXPECT_EQ(m.params - m.active_params, 6.0 * 3 * 4096 * 14336 * 32);
}

TEST(HfConfigTest, Qwen2MoeKeepsItsSharedExpertActive) {
  Model m = Load("Qwen1.5-MoE-A2.7B");
  EXPECT_EQ(m.family, "moe");
  EXPECT_EQ(m.experts, 60);
  EXPECT_EQ(m.experts_per_token, 4);
  EXPECT_EQ(m.ffn_hidden, 1408);
  EXPECT_NEAR(m.active_params, 2.7e9, 2.7e9 * 0.01);  // "A2.7B"

  // A layer listed in mlp_only_layers gets one dense MLP of intermediate_size (5632), the
  // same size as the shared expert, in place of 60 routed experts, their router and the
  // shared expert's gate.
  nlohmann::json config = Fixture("Qwen1.5-MoE-A2.7B");
  config["mlp_only_layers"] = {0};
  Model dense_first;
  ASSERT_TRUE(ModelFromHfConfig(config, "q", &dense_first).ok());
  const double expert = 3.0 * 2048 * 1408;
  EXPECT_EQ(m.params - dense_first.params, 60 * expert + 2048 * 61);
  EXPECT_EQ(m.active_params - dense_first.active_params, 4 * expert + 2048 * 61);

  // decoder_sparse_step 2 routes only layers 2, 4, ..., 24: twelve become dense.
  config = Fixture("Qwen1.5-MoE-A2.7B");
  config["decoder_sparse_step"] = 2;
  Model every_other;
  ASSERT_TRUE(ModelFromHfConfig(config, "q", &every_other).ok());
  EXPECT_EQ(m.params - every_other.params, 12 * (60 * expert + 2048 * 61));
}

TEST(HfConfigTest, Qwen25SmallTiesItsEmbeddingsAndHasQkvBiases) {
  Model m = Load("Qwen2.5-0.5B");
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_EQ(m.kv_heads, 2);
  nlohmann::json untied = Fixture("Qwen2.5-0.5B");
  untied["tie_word_embeddings"] = false;
  Model u;
  ASSERT_TRUE(ModelFromHfConfig(untied, "u", &u).ok());
  EXPECT_EQ(u.params - m.params, 151936.0 * 896);

  // The same shape as llama has no q/k/v biases: 24 layers x (896 + 2 x 128) fewer.
  nlohmann::json as_llama = Fixture("Qwen2.5-0.5B");
  as_llama["model_type"] = "llama";
  Model l;
  ASSERT_TRUE(ModelFromHfConfig(as_llama, "l", &l).ok());
  EXPECT_EQ(m.params - l.params, 24.0 * (896 + 2 * 128));
}

TEST(HfConfigTest, EncoderAndEncoderDecoderShapes) {
  Model bert = Load("bert-base-uncased");
  EXPECT_EQ(bert.family, "encoder");
  EXPECT_EQ(bert.context, 512);
  EXPECT_TRUE(bert.tied_embeddings);

  Model roberta = Load("roberta-base");
  EXPECT_EQ(roberta.family, "encoder");
  EXPECT_EQ(roberta.context, 512);  // 514 position slots, two reserved

  Model t5 = Load("t5-base");
  EXPECT_EQ(t5.family, "encoder-decoder");
  EXPECT_EQ(t5.layers, 12);  // per stack
  EXPECT_EQ(t5.hidden, 768);
  EXPECT_EQ(t5.ffn_hidden, 3072);
  EXPECT_EQ(t5.context, 512);
  EXPECT_TRUE(t5.tied_embeddings);

  Model flan = Load("flan-t5-base");
  EXPECT_FALSE(flan.tied_embeddings);

  // mT5 is read like T5.
  nlohmann::json mt5 = Fixture("flan-t5-base");
  mt5["model_type"] = "mt5";
  Model m;
  ASSERT_TRUE(ModelFromHfConfig(mt5, "mt5", &m).ok());
  EXPECT_EQ(m.params, flan.params);
}

TEST(HfConfigTest, Gpt2DefaultsWhatItsConfigLeavesOut) {
  Model m = Load("gpt2");
  EXPECT_EQ(m.ffn_hidden, 4 * 768);  // n_inner absent: 4 x n_embd
  EXPECT_EQ(m.context, 1024);
  EXPECT_TRUE(m.tied_embeddings);  // GPT-2 ties by default
  EXPECT_EQ(m.kv_heads, 12);

  nlohmann::json config = Fixture("gpt2");
  config["n_inner"] = nullptr;  // how transformers writes "default"
  Model null_inner;
  ASSERT_TRUE(ModelFromHfConfig(config, "gpt2", &null_inner).ok());
  EXPECT_EQ(null_inner.params, m.params);
  EXPECT_EQ(null_inner.name, "gpt2");
  EXPECT_EQ(null_inner.source, "config.json");
}

TEST(HfConfigTest, HeadDimMayDifferFromHiddenOverHeads) {
  Model gemma = Load("gemma-2-9b");
  EXPECT_TRUE(gemma.tied_embeddings);  // Gemma ties by default
  nlohmann::json config = Fixture("gemma-2-9b");
  config.erase("head_dim");  // 3584 / 16 = 224 instead of 256
  Model narrow;
  ASSERT_TRUE(ModelFromHfConfig(config, "g", &narrow).ok());
  // q and o shrink by 3584 x 16 x 32 each, k and v by 3584 x 8 x 32 each, in 42 layers.
  EXPECT_EQ(gemma.params - narrow.params, 42.0 * 3584 * 32 * (2 * 16 + 2 * 8));
}

TEST(HfConfigTest, NamesComeFromTheConfigOrItsPath) {
  TempDir dir;
  nlohmann::json config = Fixture("Mistral-7B-v0.1");
  Model m;
  std::string path = dir.Write("Mistral-7B-v0.1/config.json", config.dump());
  ASSERT_TRUE(LoadHfConfigFile(path, &m).ok());
  EXPECT_EQ(m.name, "Mistral-7B-v0.1");
  EXPECT_EQ(m.source, path);

  config["_name_or_path"] = "mistralai/Mistral-7B-v0.1";
  ASSERT_TRUE(LoadHfConfigFile(dir.Write("snapshot/config.json", config.dump()), &m).ok());
  EXPECT_EQ(m.name, "mistralai/Mistral-7B-v0.1");
}

TEST(HfConfigTest, RejectsUnsupportedModelType) {
  nlohmann::json config = Fixture("Llama-3.1-8B");
  config["model_type"] = "xyz";
  std::string message = ErrorFor(config);
  EXPECT_NE(message.find("config.json: model_type 'xyz' is not supported; supported: llama, "),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("t5"), std::string::npos) << message;

  config.erase("model_type");
  EXPECT_EQ(ErrorFor(config), "config.json: field 'model_type' is missing");
}

TEST(HfConfigTest, RejectsMissingOrNonPositiveFields) {
  nlohmann::json config = Fixture("Llama-3.1-8B");
  config.erase("hidden_size");
  EXPECT_EQ(ErrorFor(config), "config.json: field 'hidden_size' is missing");

  config = Fixture("Llama-3.1-8B");
  config["num_hidden_layers"] = -1;
  EXPECT_EQ(ErrorFor(config),
            "config.json: field 'num_hidden_layers' must be a positive integer (got -1)");

  for (nlohmann::json bad : {nlohmann::json("4096"), nlohmann::json(0), nlohmann::json(4096.5),
                             nlohmann::json(true), nlohmann::json(1e12)}) {
    config = Fixture("Llama-3.1-8B");
    config["hidden_size"] = bad;
    EXPECT_NE(ErrorFor(config).find("field 'hidden_size' must be a positive integer"),
              std::string::npos)
        << bad.dump();
  }

  config = Fixture("gpt2");
  config.erase("n_embd");  // the message names the key this model_type uses
  EXPECT_EQ(ErrorFor(config), "config.json: field 'n_embd' is missing");

  config = Fixture("Llama-3.1-8B");
  config["tie_word_embeddings"] = "no";
  EXPECT_NE(ErrorFor(config).find("'tie_word_embeddings' must be true or false"),
            std::string::npos);

  EXPECT_NE(ErrorFor(nlohmann::json::array()).find("expected a JSON object"), std::string::npos);
}

TEST(HfConfigTest, RejectsInconsistentShapes) {
  nlohmann::json config = Fixture("Llama-3.1-8B");
  config["num_key_value_heads"] = 5;
  EXPECT_EQ(ErrorFor(config),
            "config.json: num_attention_heads (32) must be a multiple of num_key_value_heads (5)");

  config = Fixture("Llama-3.1-8B");
  config["num_attention_heads"] = 24;
  config["num_key_value_heads"] = 8;
  EXPECT_NE(ErrorFor(config).find("hidden_size (4096) must be a multiple of num_attention_heads"),
            std::string::npos);

  config = Fixture("Mixtral-8x7B-v0.1");
  config["num_experts_per_tok"] = 9;
  EXPECT_EQ(ErrorFor(config),
            "config.json: num_experts_per_tok (9) must not exceed num_local_experts (8)");

  config = Fixture("t5-base");
  config["feed_forward_proj"] = "gated-";
  EXPECT_NE(ErrorFor(config).find("'feed_forward_proj' must be 'ACT' or 'gated-ACT'"),
            std::string::npos);
}

TEST(HfConfigTest, ErrorsLeaveTheOutputAlone) {
  nlohmann::json config = Fixture("Llama-3.1-8B");
  config["vocab_size"] = nullptr;
  Model m;
  m.name = "unchanged";
  EXPECT_FALSE(ModelFromHfConfig(config, "x", &m).ok());
  EXPECT_EQ(m.name, "unchanged");
  EXPECT_EQ(m.params, 0);
}

TEST(HfConfigTest, FileErrors) {
  TempDir dir;
  Model m;
  Status s = LoadHfConfigFile(dir.Write("bad/config.json", "{\"model_type\": \"llama\",,}"), &m);
  EXPECT_EQ(s.code(), Status::Code::kCorruption) << s.ToString();
  EXPECT_NE(s.message().find("not valid JSON"), std::string::npos) << s.message();

  s = LoadHfConfigFile(dir.path() + "/missing/config.json", &m);
  EXPECT_EQ(s.code(), Status::Code::kIOError) << s.ToString();

  // A config error names the file it came from.
  std::string path = dir.Write("odd/config.json", R"({"model_type": "xyz"})");
  s = LoadHfConfigFile(path, &m);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.message().rfind(path + ": config.json: model_type 'xyz'", 0), 0u) << s.message();
}

}  // namespace
}  // namespace cloudfit

// Building and validating workloads from fields, files and config.json.
#include <gtest/gtest.h>

#include "cloudfit/catalog.h"
#include "cloudfit/workload.h"
#include "test_support.h"

namespace cloudfit {
namespace {

const Catalog& BuiltIn() { return testing::BuiltInCatalog(); }

Status Build(const std::vector<std::pair<std::string, std::string>>& fields, Workload* w) {
  for (const auto& [k, v] : fields) {
    Status s = SetWorkloadField(w, k, v);
    if (!s.ok()) return s;
  }
  return FinalizeWorkload(BuiltIn(), w);
}

TEST(WorkloadTest, ResolvesZooModelsAndDefaults) {
  Workload w;
  ASSERT_TRUE(Build({{"kind", "lora"}, {"model", "llama3.1-8b"}}, &w).ok());
  EXPECT_EQ(w.model.name, "Llama-3.1-8B");
  // LoRA on a decoder: QLoRA's Guanaco recipe, 16 sequences of 512 tokens (data/recipes.csv).
  EXPECT_EQ(w.seq_len, 512);
  EXPECT_EQ(w.global_batch, 16);
  EXPECT_EQ(w.precision, NumericFormat::kBf16);
  Workload bert;
  ASSERT_TRUE(Build({{"kind", "train"}, {"model", "BERT-base-uncased"}}, &bert).ok());
  EXPECT_EQ(bert.seq_len, 128);  // BERT's GLUE fine-tuning recipe
  EXPECT_EQ(bert.global_batch, 32);
}

TEST(WorkloadTest, ErrorsNameTheFieldAndWhatIsAllowed) {
  struct Case {
    std::vector<std::pair<std::string, std::string>> fields;
    std::string message;
  } cases[] = {
      {{{"batch", "-4"}}, "batch: '-4' is not allowed; a whole number of samples"},
      {{{"batch", "abc"}}, "batch: 'abc' is not allowed"},
      {{{"precision", "fp12"}}, "precision: 'fp12' is not allowed; one of fp32, tf32"},
      {{{"kind", "dance"}}, "kind: 'dance' is not allowed; one of train"},
      {{{"zero", "5"}}, "zero: '5' is not allowed; a whole number of stage in [0, 3]"},
      {{{"seq_len", "1e30"}}, "seq_len: '1e30' is not allowed"},
      {{{"tp", "0"}}, "tp: '0' is not allowed; 'auto' or a whole number"},
      {{{"batchsize", "4"}}, "unknown workload field 'batchsize'; did you mean 'batch'"},
      {{{"kind", "train"}, {"model", "Llama-9-1T"}}, "model: unknown model 'Llama-9-1T'"},
      {{{"kind", "train"}}, "model: missing"},
      {{{"kind", "train"}, {"model", "ResNet-50"}, {"precision", "int4"}},
       "precision: int8 and int4 are weight formats for inference"},
      {{{"kind", "qlora"}, {"model", "ResNet-50"}}, "kind: LoRA applies to transformer"},
      {{{"kind", "train"}, {"model", "Llama-3.1-8B"}, {"batch", "6"}, {"micro_batch", "4"}},
       "batch: the global batch 6 is not a multiple of micro_batch 4"},
      {{{"kind", "render"}, {"frames", "100"}}, "seconds_per_frame: give the render time"},
      {{{"kind", "preprocess"}}, "data_gb: preprocessing needs the data size"},
      {{{"kind", "train"}, {"params_b", "7"}, {"layers", "32"}, {"hidden", "4096"},
        {"heads", "32"}, {"kv_heads", "5"}},
       "kv_heads: 5 does not divide the 32 attention heads"},
  };
  for (const Case& c : cases) {
    Workload w;
    Status s = Build(c.fields, &w);
    ASSERT_FALSE(s.ok()) << c.message;
    EXPECT_NE(s.message().find(c.message), std::string::npos) << s.message();
  }
}

TEST(WorkloadTest, ExplicitArchitectureNumbers) {
  Workload w;
  ASSERT_TRUE(Build({{"kind", "train"}, {"params_b", "1.3"}, {"layers", "24"}, {"hidden", "2048"},
                     {"heads", "16"}, {"vocab", "50257"}},
                    &w)
                  .ok());
  EXPECT_DOUBLE_EQ(w.model.params, 1.3e9);
  EXPECT_EQ(w.model.kv_heads, 16);
}

TEST(WorkloadTest, ReadsYamlAndJsonFiles) {
  testing::TempDir dir;
  std::string yaml = dir.Write("w.yaml",
                               "kind: serve\nmodel: Llama-2-13B\nrequest_rate: 30\n"
                               "ttft_target_ms: 1000\nprecision: fp16\n");
  std::vector<std::pair<std::string, std::string>> fields;
  ASSERT_TRUE(LoadWorkloadFile(yaml, &fields).ok());
  Workload w;
  ASSERT_TRUE(Build(fields, &w).ok());
  EXPECT_EQ(w.kind, WorkloadKind::kServing);
  EXPECT_DOUBLE_EQ(*w.ttft_target_s, 1.0);
  std::string json = dir.Write("w.json", R"({"kind": "train", "model": "ResNet-50", "batch": 256})");
  fields.clear();
  ASSERT_TRUE(LoadWorkloadFile(json, &fields).ok());
  Workload j;
  ASSERT_TRUE(Build(fields, &j).ok());
  EXPECT_EQ(j.global_batch, 256);
  std::string bad = dir.Write("bad.yaml", "kind: [train\n");
  fields.clear();
  Status s = LoadWorkloadFile(bad, &fields);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("bad.yaml:"), std::string::npos) << s.message();
  std::string nested = dir.Write("nested.yaml", "serving:\n  rate: 3\n");
  fields.clear();
  s = LoadWorkloadFile(nested, &fields);
  EXPECT_NE(s.message().find("field 'serving': expected a single value"), std::string::npos)
      << s.message();
  EXPECT_FALSE(LoadWorkloadFile(dir.path() + "/missing.yaml", &fields).ok());
}

TEST(WorkloadTest, ModelFromHuggingFaceConfig) {
  Workload w;
  ASSERT_TRUE(Build({{"kind", "inference"},
                     {"model_config", testing::SourcePath("tests/fixtures/hf/Llama-3.1-8B.json")}},
                    &w)
                  .ok());
  EXPECT_NEAR(w.model.params, 8.03e9, 0.05e9);
  EXPECT_EQ(w.model.kv_heads, 8);
}

}  // namespace
}  // namespace cloudfit

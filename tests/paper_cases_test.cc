// Published figures the memory model must reproduce exactly (see docs/paper-cases.md).
#include <gtest/gtest.h>

#include "cloudfit/estimate.h"
#include "estimate/estimate_internal.h"
#include "estimate/transformer_math.h"
#include "test_support.h"

namespace cloudfit {
namespace {

const Catalog& BuiltIn() { return testing::BuiltInCatalog(); }

// ZeRO (Rajbhandari et al. 2020) Figure 1: a 7.5B-parameter model, 64 data-parallel GPUs,
// mixed-precision Adam (K = 12): 120, 31.4, 16.6 and 1.9 GB of model states per device.
TEST(PaperCasesTest, ZeroFigure1ModelStatesPerDevice) {
  const double expected_gb[] = {120, 31.40625, 16.640625, 1.875};
  for (int stage = 0; stage <= 3; ++stage) {
    Workload w;
    ASSERT_TRUE(SetWorkloadField(&w, "kind", "train").ok());
    ASSERT_TRUE(SetWorkloadField(&w, "params_b", "7.5").ok());
    ASSERT_TRUE(SetWorkloadField(&w, "layers", "32").ok());
    ASSERT_TRUE(SetWorkloadField(&w, "hidden", "4096").ok());
    ASSERT_TRUE(SetWorkloadField(&w, "heads", "32").ok());
    ASSERT_TRUE(SetWorkloadField(&w, "vocab", "50000").ok());
    ASSERT_TRUE(SetWorkloadField(&w, "zero", std::to_string(stage)).ok());
    ASSERT_TRUE(SetWorkloadField(&w, "tp", "1").ok());
    ASSERT_TRUE(SetWorkloadField(&w, "pp", "1").ok());
    ASSERT_TRUE(FinalizeWorkload(BuiltIn(), &w).ok());
    HardwareSpec spec;
    spec.gpu = "A100-80GB";
    spec.gpus = 8;
    spec.nodes = 8;
    Hardware hw;
    ASSERT_TRUE(ResolveHardware(BuiltIn(), spec, &hw).ok());
    Estimate e;
    Status s = EstimateWorkload(BuiltIn(), w, hw, &e);
    ASSERT_TRUE(s.ok()) << s.ToString();
    double states = e.memory.weights_bytes + e.memory.gradients_bytes + e.memory.optimizer_bytes;
    EXPECT_NEAR(states / 1e9, expected_gb[stage], 1e-9) << "ZeRO stage " << stage;
  }
}

struct KorthikantiConfig {
  const char* name;
  double a, h, layers, t, s, b;
  double baseline_gb;  // eq. 2 x L (tensor parallel only), first pipeline stage
  double present_gb;   // eq. 6: 34 s b h L / t (sequence parallel + selective recompute)
};

// Korthikanti et al. 2022, Table 3 configurations; the values plotted in Figure 1 computed from
// the paper's equations 2 and 6 (the figure prints no numbers; docs/paper-cases.md shows the
// arithmetic), without the interleaved-schedule factor 1 + (p-1)/(pm) that the paper applies to
// 175B and 530B (13.26 and 24.78 GB with it).
TEST(PaperCasesTest, KorthikantiFigure1ActivationMemoryPerGpu) {
  const KorthikantiConfig configs[] = {
      {"22B", 64, 6144, 48, 8, 2048, 4, 63.62, 10.27},
      {"175B", 96, 12288, 96, 8, 2048, 1, 55.57, 10.27},
      {"530B", 128, 20480, 105, 8, 2048, 1, 92.48, 18.72},
      {"1T", 160, 25600, 128, 8, 2048, 1, 140.93, 28.52},
  };
  for (const KorthikantiConfig& c : configs) {
    Model m;
    m.family = "decoder";
    m.heads = static_cast<int>(c.a);
    m.kv_heads = m.heads;
    m.hidden = static_cast<int>(c.h);
    m.ffn_hidden = 4 * m.hidden;  // GPT: not gated, trained with dropout
    m.layers = static_cast<int>(c.layers);
    ActivationOptions baseline;
    baseline.tensor_parallel = static_cast<int>(c.t);
    baseline.dropout = true;
    double bytes = LayerActivationBytes(m, c.s, c.b, baseline) * c.layers;
    EXPECT_NEAR(bytes / 1e9, c.baseline_gb, 0.01) << c.name << " baseline";
    ActivationOptions present = baseline;
    present.sequence_parallel = true;
    present.recompute = Recompute::kSelective;
    bytes = LayerActivationBytes(m, c.s, c.b, present) * c.layers;
    EXPECT_NEAR(bytes / 1e9, c.present_gb, 0.01) << c.name << " sequence parallel + selective";
  }
}

// One GPT layer: 16 heads, 1,024 wide, a 4,096-wide MLP.
Model GptLayer() {
  Model m;
  m.family = "decoder";
  m.heads = 16;
  m.kv_heads = 16;
  m.hidden = 1024;
  m.ffn_hidden = 4096;
  m.layers = 1;
  return m;
}

TEST(PaperCasesTest, KorthikantiPerLayerCoefficients) {
  // One GPT layer, no parallelism: s*b*h*(34 + 5*a*s/h) bytes.
  Model m = GptLayer();
  double s = 512, b = 2, h = 1024, a = 16;
  ActivationOptions o;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, s, b, o), s * b * h * (34 + 5 * a * s / h));
  o.flash_attention = true;  // FlashAttention keeps no s x s scores
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, s, b, o), s * b * h * 34);
  o.flash_attention = false;
  o.recompute = Recompute::kFull;  // only the layer input survives
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, s, b, o), 2 * s * b * h);
}

// PyTorch's eager attention (Hugging Face's) runs the softmax in FP32 and keeps its output (4
// bytes per score) and the 16-bit copy the value product reads (2), where Megatron's fused
// softmax keeps 2: with dropout (mask 1, output 2) 9 a s / h per token instead of 5, and 6
// instead of 2 for a model trained without dropout.
TEST(PaperCasesTest, EagerAttentionKeepsItsFp32SoftmaxAndTheCopy) {
  Model m = GptLayer();
  double s = 512, b = 2, h = 1024, a = 16;
  ActivationOptions o;
  o.fp32_softmax = true;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, s, b, o), s * b * h * (34 + 9 * a * s / h));
  o.dropout = false;  // no masks after attention and the MLP either (2h)
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, s, b, o), s * b * h * (32 + 6 * a * s / h));
  o.fp32_softmax = false;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, s, b, o), s * b * h * (32 + 2 * a * s / h));
  o.flash_attention = true;  // no scores at all
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, s, b, o), s * b * h * 32);
}

TEST(PaperCasesTest, KvCachePerTokenOfLlama31) {
  const Model* small = nullptr;
  const Model* large = nullptr;
  ASSERT_TRUE(BuiltIn().FindModel("Llama-3.1-8B", &small).ok());
  ASSERT_TRUE(BuiltIn().FindModel("Llama-3.1-70B", &large).ok());
  EXPECT_DOUBLE_EQ(KvCacheBytesPerToken(*small, 2), 131072);
  EXPECT_DOUBLE_EQ(KvCacheBytesPerToken(*large, 2), 327680);
}

TEST(PaperCasesTest, QloraNf4WithDoubleQuantization) {
  // Dettmers et al. 2023: 0.127 bits of constants per parameter after double quantization.
  EXPECT_NEAR(kNf4BitsPerWeight, 4.127, 0.001);
}

}  // namespace
}  // namespace cloudfit

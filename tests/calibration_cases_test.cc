// Which calibration rows become cases: a row is scored only when a workload can express what
// it measured, and every other row is listed with the reason.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "cloudfit/calibration.h"
#include "cloudfit/estimate.h"
#include "test_support.h"

namespace cloudfit {
namespace {

std::string PeftRow(const std::string& method, const std::string& metric, double value,
                    const std::string& unit) {
  return "huggingface/peft@5d602fdb:method_comparison,meta-llama/Llama-3.2-3B,3.21,"
         "PEFT method_comparison: " +
         method + ",bfloat16,<= 768 (variable-length samples),4,1x L40S 48GB," + metric + "," +
         std::to_string(value) + "," + unit + ",\n";
}

// The PEFT benchmark trains one model with many methods. LoRA, full fine-tuning and the methods
// whose step is LoRA's or less are timed; DoRA, BOFT and the others whose step does work no
// workload kind expresses are not scored for speed, but still for memory.
TEST(CalibrationCasesTest, PeftMethodsAreTimedOnlyWhereAWorkloadExpressesTheirStep) {
  testing::TempDir dir;
  dir.Write(
      "train_throughput.csv",
      "source,model,task,precision,batch_size_per_gpu,gpu,num_gpus,metric,value,unit,notes\n");
  std::string rows =
      "source,model,params_b,method,precision,seq_len,batch,gpu,metric,value,unit,notes\n";
  rows += PeftRow("lora/llama-3.2-3B-rank32", "train_tokens_per_s", 7174.3, "tokens/s");
  rows +=
      PeftRow("full-finetuning/llama-3.2-3B-lr_0.00001", "train_tokens_per_s", 2315.5, "tokens/s");
  rows += PeftRow("ia3/llama-3.2-3B-default", "train_tokens_per_s", 7225.5, "tokens/s");
  rows += PeftRow("lora/llama-3.2-3B-rank32-dora", "train_tokens_per_s", 5941.1, "tokens/s");
  rows += PeftRow("boft/llama-3.2-3B-default", "train_tokens_per_s", 1265.7, "tokens/s");
  rows += PeftRow("prompt_tuning/llama-3.2-3B-default", "train_tokens_per_s", 4467.3, "tokens/s");
  rows += PeftRow("boft/llama-3.2-3B-default", "train_memory_reserved_p99", 20.5, "GiB");
  dir.Write("llm_memory_and_speed.csv", rows);

  std::vector<CalibrationCase> cases;
  std::vector<SkippedRow> skipped;
  ASSERT_TRUE(LoadCalibrationCases(testing::BuiltInCatalog(), dir.path(), &cases, &skipped).ok());

  std::map<std::string, MetricFamily> scored;  // line -> family
  for (const CalibrationCase& c : cases) scored[c.id.substr(c.id.find(':') + 1)] = c.family;
  std::map<std::string, std::string> reasons;  // line -> reason
  for (const SkippedRow& s : skipped) reasons[s.id.substr(s.id.find(':') + 1)] = s.reason;

  // Lines 2-4: LoRA, full fine-tuning and IA3 are timed.
  for (const char* line : {"2", "3", "4"}) {
    ASSERT_TRUE(scored.count(line)) << "line " << line << ": " << reasons[line];
    EXPECT_EQ(scored[line], MetricFamily::kTrainingThroughput) << "line " << line;
  }
  // Lines 5-7: DoRA, BOFT and prompt tuning are not, and say why.
  for (const char* line : {"5", "6", "7"}) {
    ASSERT_TRUE(reasons.count(line)) << "line " << line << " was scored";
    EXPECT_NE(reasons[line].find("not modelled"), std::string::npos) << reasons[line];
  }
  EXPECT_NE(reasons["6"].find("boft/"), std::string::npos) << "the reason names the method";
  // Line 8: BOFT's memory is scored.
  ASSERT_TRUE(scored.count("8")) << reasons["8"];
  EXPECT_EQ(scored["8"], MetricFamily::kMemory);
}

// PyTorch's caching allocator (torch.cuda.memory_reserved and kin) holds tensors and library
// workspaces but not the CUDA context: such a figure is compared with the estimate less the
// context, and a figure taken by other means (nvidia-smi, NVML) with the whole estimate.
TEST(CalibrationCasesTest, AllocatorFiguresAreComparedWithoutTheCudaContext) {
  testing::TempDir dir;
  std::string header =
      "source,gpu,nodes,metric,value,unit,notes,kind,model,precision,seq_len,micro_batch\n";
  std::string workload = ",lora,Llama-3.1-8B,bf16,1024,1\n";
  dir.Write("memory.csv", header +
                              "a,1x A100-SXM4-80GB,1,peak_gpu_memory,20,GiB,"
                              "torch.cuda.max_memory_reserved() over the steps" +
                              workload +
                              "b,1x A100-SXM4-80GB,1,peak_gpu_memory,20,GiB,"
                              "nvidia-smi while training" +
                              workload);
  std::vector<CalibrationCase> cases;
  std::vector<SkippedRow> skipped;
  ASSERT_TRUE(
      LoadExtraCases(testing::BuiltInCatalog(), dir.path() + "/memory.csv", &cases, &skipped).ok());
  ASSERT_EQ(cases.size(), 2u) << (skipped.empty() ? "" : skipped[0].reason);
  EXPECT_TRUE(cases[0].allocator_view);
  EXPECT_FALSE(cases[1].allocator_view);
  double allocator = 0, whole = 0;
  ASSERT_TRUE(PredictCase(testing::BuiltInCatalog(), cases[0], &allocator).ok());
  ASSERT_TRUE(PredictCase(testing::BuiltInCatalog(), cases[1], &whole).ok());
  EXPECT_NEAR(whole - allocator, kCudaContextBytes, 1.0);
}

// A held-out table's llama-bench rows name their weights' GGUF format and their test, as the
// shared table's do: each format has its bits per weight, and a format or metric the loader does
// not know is skipped with the field and what is allowed, not scored as something else.
TEST(CalibrationCasesTest, HeldOutLlamaBenchRowsAreReadAsLlamaCppRuns) {
  testing::TempDir dir;
  std::string header =
      "source,model,params_b,method,precision,seq_len,batch,gpu,metric,value,unit,notes\n";
  auto row = [](const std::string& precision, const std::string& seq, const std::string& metric) {
    return "s,CodeLlama-7B,6.74,inference llama.cpp (llama-bench)," + precision + "," + seq +
           ",1,1x RTX-4090," + metric + ",100,tokens/s,n\n";
  };
  dir.Write("bench.csv", header + row("GGUF Q8_0", "128", "decode_tokens_per_s") +
                             row("GGUF Q4_0", "512", "prefill_tokens_per_s") +
                             row("GGUF F16", "", "decode_tokens_per_s") +
                             row("GGUF IQ2_XS", "128", "decode_tokens_per_s") +
                             row("GGUF Q8_0", "-5", "decode_tokens_per_s") +
                             row("GGUF Q8_0", "128", "peak_gpu_memory") +
                             "s,Llama-2-7B,6.74,LoRA FSDP,bf16,512,1,2x RTX-3090,"
                             "peak_gpu_memory_reserved_per_gpu,10,GiB,n\n");
  std::vector<CalibrationCase> cases;
  std::vector<SkippedRow> skipped;
  ASSERT_TRUE(
      LoadExtraCases(testing::BuiltInCatalog(), dir.path() + "/bench.csv", &cases, &skipped).ok());
  ASSERT_EQ(cases.size(), 3u);
  EXPECT_EQ(cases[0].family, MetricFamily::kLlmDecode);
  EXPECT_EQ(cases[0].workload.software, "llama.cpp");
  EXPECT_DOUBLE_EQ(cases[0].workload.weight_bits, 8.5);
  EXPECT_EQ(cases[0].workload.output_tokens, 128);
  EXPECT_EQ(cases[1].family, MetricFamily::kLlmPrefill);
  EXPECT_DOUBLE_EQ(cases[1].workload.weight_bits, 4.5);
  EXPECT_EQ(cases[1].workload.prompt_tokens, 512);
  EXPECT_EQ(cases[2].workload.output_tokens, 128) << "llama-bench's default tg 128";
  for (const CalibrationCase& c : cases) EXPECT_TRUE(c.held_out && !c.fitted) << c.id;
  ASSERT_EQ(skipped.size(), 4u);
  EXPECT_NE(skipped[0].reason.find("IQ2_XS"), std::string::npos) << skipped[0].reason;
  EXPECT_NE(skipped[1].reason.find("seq_len"), std::string::npos) << skipped[1].reason;
  EXPECT_NE(skipped[2].reason.find("peak_gpu_memory"), std::string::npos) << skipped[2].reason;
  EXPECT_NE(skipped[3].reason.find("LoRA FSDP"), std::string::npos) << skipped[3].reason;
}

}  // namespace
}  // namespace cloudfit

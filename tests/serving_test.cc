// Serving by engine and under load, end to end through EstimateWorkload and Recommend: what an
// experienced serving engineer expects of the plan (the batch a load forms, replicas at the
// target utilisation, engines and their memory and KV formats, bounded replica counts, cheaper
// quantised alternatives) and the errors bad serving fields get.
#include <cmath>

#include <gtest/gtest.h>

#include "cloudfit/estimate.h"
#include "cloudfit/recommend.h"
#include "test_support.h"

namespace cloudfit {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

const Catalog& BuiltIn() { return testing::BuiltInCatalog(); }

Status Finalized(const Fields& fields, Workload* w) {
  for (const auto& [k, v] : fields) {
    Status s = SetWorkloadField(w, k, v);
    if (!s.ok()) return s;
  }
  return FinalizeWorkload(BuiltIn(), w);
}

Estimate Estimated(const Fields& fields, const std::string& gpu, double gpus = 1) {
  Workload w;
  Status s = Finalized(fields, &w);
  EXPECT_TRUE(s.ok()) << s.ToString();
  HardwareSpec spec;
  spec.gpu = gpu;
  spec.gpus = gpus;
  Hardware hw;
  s = ResolveHardware(BuiltIn(), spec, &hw);
  EXPECT_TRUE(s.ok()) << s.ToString();
  Estimate e;
  s = EstimateWorkload(BuiltIn(), w, hw, &e);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(e.serving.has_value());
  return e;
}

Fields Serve(const std::string& model, double rate) {
  return {{"kind", "serve"}, {"model", model}, {"request_rate", std::to_string(rate)}};
}

TEST(ServingTest, ADevelopmentEndpointRunsAtTheBatchItsLoadForms) {
  // 0.2 requests/s: about one sequence at a time, so a token costs one sequence's step, not the
  // full batch's (the old plan showed 1-1.8 s per token here).
  Estimate dev = Estimated(Serve("Llama-3.1-8B", 0.2), "A100-80GB");
  Estimate busy = Estimated(Serve("Llama-3.1-8B", 20), "A100-80GB");
  const ServingFigures& d = *dev.serving;
  EXPECT_EQ(d.replicas, 1);
  EXPECT_LT(d.batch_at_load, 2);
  EXPECT_LT(d.utilisation, 0.1);
  EXPECT_LT(d.tpot_s, 0.02) << "8B in bf16 on an A100 decodes one sequence in ~11 ms";
  EXPECT_GT(busy.serving->batch_at_load, 5 * d.batch_at_load);
  EXPECT_GT(busy.serving->tpot_median_s, d.tpot_median_s);
  EXPECT_GE(d.ttft_s, d.ttft_median_s);
  EXPECT_GE(d.tpot_s, d.tpot_median_s);
}

TEST(ServingTest, ReplicasAreSizedAtTheTargetUtilisation) {
  for (double target : {0.5, 0.7, 0.9}) {
    Fields f = Serve("Llama-2-13B", 30);
    f.push_back({"precision", "fp16"});
    f.push_back({"target_utilisation", std::to_string(target)});
    Estimate e = Estimated(f, "A100-80GB");
    const ServingFigures& s = *e.serving;
    EXPECT_EQ(s.sized_by, "utilisation");
    EXPECT_NEAR(s.requests_per_s, target * s.saturation_requests_per_s, 1e-6 * s.requests_per_s);
    EXPECT_EQ(s.replicas, static_cast<int>(std::ceil(30 / s.requests_per_s)));
    EXPECT_LE(s.utilisation, target + 1e-9);
    EXPECT_GT(s.utilisation, 0.5 * target) << "not grossly over-provisioned";
  }
  Fields low = Serve("Llama-2-13B", 30), high = low;
  low.push_back({"target_utilisation", "0.5"});
  high.push_back({"target_utilisation", "0.9"});
  EXPECT_GT(Estimated(low, "A100-80GB").serving->replicas,
            Estimated(high, "A100-80GB").serving->replicas);
}

TEST(ServingTest, ATighterPercentileOrTargetNeedsMoreReplicas) {
  Fields f = Serve("Llama-3.1-8B", 40);
  Estimate free = Estimated(f, "L40S");
  double p95_ttft = free.serving->ttft_s;
  // A TTFT target just under what the utilisation-sized plan gives binds the plan.
  f.push_back({"ttft_target_ms", std::to_string(0.8 * p95_ttft * 1e3)});
  Estimate bound = Estimated(f, "L40S");
  EXPECT_EQ(bound.serving->sized_by, "latency");
  EXPECT_GT(bound.serving->replicas, free.serving->replicas);
  EXPECT_TRUE(bound.serving->meets_targets);
  EXPECT_LE(bound.serving->ttft_s, 0.8 * p95_ttft);
  // The same target at p99 needs at least as many.
  f.push_back({"latency_percentile", "p99"});
  Estimate p99 = Estimated(f, "L40S");
  EXPECT_GE(p99.serving->replicas, bound.serving->replicas);
  EXPECT_DOUBLE_EQ(p99.serving->percentile, 0.99);
}

TEST(ServingTest, EnginesDifferInBatchingMemoryAndKvFormat) {
  Fields f = Serve("Llama-3.1-8B", 2);
  Estimate vllm = Estimated(f, "L40S");
  Fields cpp = f;
  cpp.push_back({"engine", "llama.cpp"});
  Estimate llama = Estimated(cpp, "L40S");
  EXPECT_EQ(vllm.serving->engine, "vllm");
  EXPECT_EQ(llama.serving->engine, "llama.cpp");
  EXPECT_EQ(llama.serving->max_batch, 1) << "one slot";
  EXPECT_GT(vllm.serving->max_batch, 100);
  // One request at a time queues: the same rate needs more llama.cpp replicas.
  EXPECT_GT(llama.serving->replicas, vllm.serving->replicas);
  // TensorRT-LLM with an FP8 KV cache holds twice the tokens per byte of cache.
  Fields trt = f;
  trt.push_back({"engine", "tensorrt-llm"});
  Estimate trt16 = Estimated(trt, "H100");
  trt.push_back({"kv_cache_dtype", "fp8_e4m3"});  // vLLM's and TensorRT-LLM's spelling
  Estimate trt8 = Estimated(trt, "H100");
  EXPECT_NEAR(trt8.serving->kv_capacity_tokens, 2 * trt16.serving->kv_capacity_tokens,
              0.01 * trt8.serving->kv_capacity_tokens);
  // The engine's memory share is a field.
  Fields half = f;
  half.push_back({"gpu_memory_utilization", "0.5"});
  EXPECT_LT(Estimated(half, "L40S").serving->kv_capacity_tokens,
            0.5 * vllm.serving->kv_capacity_tokens);
  // An explicit sequence cap is honoured.
  Fields capped = f;
  capped.push_back({"max_batch", "8"});
  EXPECT_EQ(Estimated(capped, "L40S").serving->max_batch, 8);
}

TEST(ServingTest, MultiGpuHardwareRunsCopiesOrSplitsTheModel) {
  // An 8B model on eight A100s: eight copies, one GPU each (no tensor parallel traffic).
  Estimate small = Estimated(Serve("Llama-3.1-8B", 50), "A100-80GB", 8);
  EXPECT_EQ(small.serving->copies * small.serving->tensor_parallel *
                small.serving->pipeline_parallel, 8);
  EXPECT_GE(small.serving->copies, 4);
  // A 70B model does not fit one 80 GB GPU in 16 bit: fewer copies over more GPUs.
  Estimate big = Estimated(Serve("Llama-3.1-70B", 5), "A100-80GB", 8);
  EXPECT_GE(big.serving->tensor_parallel * big.serving->pipeline_parallel, 2);
  EXPECT_LE(big.serving->copies, 4);
  EXPECT_TRUE(big.fits);
  // A fixed split is honoured.
  Fields fixed = Serve("Llama-3.1-70B", 5);
  fixed.push_back({"tp", "8"});
  Estimate tp8 = Estimated(fixed, "A100-80GB", 8);
  EXPECT_EQ(tp8.serving->tensor_parallel, 8);
  EXPECT_EQ(tp8.serving->copies, 1);
}

TEST(ServingTest, ReplicasStayBoundedAtAbsurdRates) {
  // Issue 13 found -2,147,483,648 replicas at 10 M requests/s.
  Estimate e = Estimated(Serve("Llama-3.1-8B", 1e7), "L4");
  EXPECT_GT(e.serving->replicas, 100000);
  EXPECT_LE(e.serving->replicas, 1000000);
  Estimate t4 = Estimated(Serve("Llama-3.1-70B", 1e7), "T4", 8);
  EXPECT_GT(t4.serving->replicas, 0);
  EXPECT_LE(t4.serving->replicas, 1000000);
}

TEST(ServingTest, BadServingFieldsAreClearErrors) {
  struct Case {
    Fields fields;
    const char* field;
  } cases[] = {
      {{{"kind", "serve"}, {"model", "Llama-3.1-8B"}, {"engine", "tgi-9000"}}, "engine"},
      {{{"kind", "serve"}, {"model", "Llama-3.1-8B"}, {"engine", "llama.cpp"},
        {"kv_cache_dtype", "fp8"}},
       "kv_cache_dtype"},
      {{{"kind", "serve"}, {"model", "Llama-3.1-8B"}, {"kv_cache_dtype", "fp4"}}, "kv_cache_dtype"},
      {{{"kind", "serve"}, {"model", "Llama-3.1-8B"}, {"engine", "llama.cpp"}, {"tp", "2"}}, "tp"},
      {{{"kind", "serve"}, {"model", "Llama-3.1-8B"}, {"tp", "2"}, {"pp", "2"}}, "tp"},
      {{{"kind", "serve"}, {"model", "Llama-3.1-8B"}, {"latency_percentile", "p42"}},
       "latency_percentile"},
      {{{"kind", "serve"}, {"model", "Llama-3.1-8B"}, {"target_utilisation", "1.5"}},
       "target_utilisation"},
      {{{"kind", "serve"}, {"model", "Llama-3.1-8B"}, {"gpu_memory_utilization", "0"}},
       "gpu_memory_utilization"},
      {{{"kind", "serve"}, {"model", "Llama-3.1-8B"}, {"max_batch", "-3"}}, "max_batch"},
  };
  for (const Case& c : cases) {
    Workload w;
    Status s = Finalized(c.fields, &w);
    EXPECT_FALSE(s.ok()) << c.field;
    EXPECT_EQ(s.message().rfind(c.field, 0), 0u) << s.message();
  }
}

TEST(ServingTest, AMalformedEngineFileIsAnErrorNamingTheFileLineAndField) {
  CatalogFiles files = BuiltIn().files();
  std::string& engines = files["serving_engines.csv"];
  ASSERT_FALSE(engines.empty());
  size_t at = engines.find(",continuous,paged,256,");
  ASSERT_NE(at, std::string::npos);
  engines.replace(at, 12, ",sometimes,");
  Catalog broken;
  ASSERT_TRUE(Catalog::FromFiles(files, "my-catalog", &broken).ok());
  Workload w;
  ASSERT_TRUE(SetWorkloadField(&w, "kind", "serve").ok());
  ASSERT_TRUE(SetWorkloadField(&w, "model", "Llama-3.1-8B").ok());
  Status s = FinalizeWorkload(broken, &w);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("my-catalog/serving_engines.csv:3"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("batching"), std::string::npos) << s.message();
  // A catalog directory without the file uses the built-in engines.
  files.erase("serving_engines.csv");
  Catalog older;
  ASSERT_TRUE(Catalog::FromFiles(files, "older-catalog", &older).ok());
  Workload again;
  ASSERT_TRUE(SetWorkloadField(&again, "kind", "serve").ok());
  ASSERT_TRUE(SetWorkloadField(&again, "model", "Llama-3.1-8B").ok());
  EXPECT_TRUE(FinalizeWorkload(older, &again).ok());
  EXPECT_EQ(again.engine_profile.name, "vllm");
}

TEST(ServingTest, RecommendPlansAutoscalingAtTheSameUtilisation) {
  Workload w;
  ASSERT_TRUE(Finalized({{"kind", "serve"}, {"model", "Llama-2-13B"}, {"precision", "fp16"},
                         {"request_rate", "30"}, {"ttft_target_ms", "1000"},
                         {"target_utilisation", "0.6"}},
                        &w)
                  .ok());
  RecommendOptions o;
  o.pricing = {PricingMode::kOnDemand};
  Recommendation r;
  ASSERT_TRUE(Recommend(BuiltIn(), w, o, &r).ok());
  ASSERT_FALSE(r.ranked.empty());
  for (const Candidate& c : r.ranked) {
    ASSERT_TRUE(c.autoscaling.has_value());
    EXPECT_DOUBLE_EQ(c.autoscaling->scale_out_utilisation, 0.6);
    EXPECT_LE(c.autoscaling->utilisation_at_rate, 0.6 + 1e-9) << c.instance->name;
    EXPECT_GE(c.autoscaling->max_replicas, c.replicas);
    EXPECT_LE(c.estimate->serving->ttft_s, 1.0);
    // Cost per million tokens: the fleet's cost over the tokens served at the requested rate.
    double tokens_m = 30.0 * 256 * 3600 * c.hours / 1e6;
    EXPECT_NEAR(*c.cost_per_unit, *c.total_cost / tokens_m, 1e-9 * *c.cost_per_unit);
  }
  // A 16-bit 13B model at 30 requests/s: 8-bit or 4-bit weights serve it cheaper, and the
  // answer says so.
  bool proposed = false;
  for (const std::string& n : r.notes) proposed |= n.rfind("cheaper with", 0) == 0;
  EXPECT_TRUE(proposed);
}

}  // namespace
}  // namespace cloudfit

// The pieces of the serving estimate (llm_serving.cc) that the accuracy tests and the
// recommender's serving plan reuse: the step inputs an engine profile implies, and one model
// copy's steps for the load model.
#ifndef CLOUDFIT_ESTIMATE_LLM_SERVING_H_
#define CLOUDFIT_ESTIMATE_LLM_SERVING_H_

#include "estimate/llm_step_model.h"
#include "estimate/serving_load.h"

namespace cloudfit {

// What the workload's engine profile (and its kv_cache_dtype and gpu_memory_utilization fields)
// changes in the step physics on this hardware. The profile's kernel efficiencies apply to GPUs
// only; CPUs keep the fitted rows of data/efficiency.csv.
EngineStepInputs EngineStepInputsFor(const Workload& w, const Hardware& hw);

// The load model's view of one copy: continuous batching over `step_model`'s decode and prefill
// times, with `max_sequences` admitted at once and `chunk_tokens` per iteration. For pipelined
// copies (`stages` > 1 under continuous batching) each token passes all stages at a micro-batch
// of sequences / stages. `step_model` must outlive the result.
ReplicaSteps StepsForCopy(const LlmStepModel& step_model, const Workload& w,
                          BatchingPolicy policy, int max_sequences, int chunk_tokens, int stages);

}  // namespace cloudfit

#endif  // CLOUDFIT_ESTIMATE_LLM_SERVING_H_

// Pieces of the estimator shared by its files: the device figures a roofline needs, named
// constants with their sources, and the per-kind estimators the dispatcher calls.
#ifndef CLOUDFIT_ESTIMATE_ESTIMATE_INTERNAL_H_
#define CLOUDFIT_ESTIMATE_ESTIMATE_INTERNAL_H_

#include <string>

#include "cloudfit/efficiency.h"
#include "cloudfit/estimate.h"

namespace cloudfit {

// CUDA context plus cuBLAS/cuDNN workspaces. PyTorch PR #86509 measured the context at 287 MB
// with lazy module loading (the default since CUDA 11.7; kCudaContextBytes) and 667 MB without;
// workspaces add about 200 MB. We take 500 MiB.
inline constexpr double kCudaRuntimeBytes = 500.0 * 1024 * 1024;
// Caching-allocator slack over what tensors hold: PyTorch reserves in 2 MiB blocks and keeps
// freed blocks; no public study gives a typical figure (ZeRO reports OOMs with >30% free in the
// worst case), so 5% of the dynamic memory is an assumption, checked against the PEFT rows of
// shared/calibration (reserved memory) in the accuracy test.
inline constexpr double kAllocatorSlack = 0.05;
// NCCL: NCCL_BUFFSIZE defaults to 4 MiB per channel per peer and protocol; with a ring (2 peers),
// up to 16 channels and the simple protocol that is 128 MiB, doubled for the LL/LL128 buffers.
inline constexpr double kNcclBufferBytes = 256.0 * 1024 * 1024;
// DeepSpeed's default reduce_bucket_size is 5e8 elements (16-bit): the ZeRO-1/2 gradient bucket.
inline constexpr double kZeroReduceBucketBytes = 5e8 * 2;
// vLLM's default gpu_memory_utilization: the share of device memory a paged-KV engine claims.
inline constexpr double kPagedEngineMemoryShare = 0.9;
// QLoRA NF4 with double quantization: 4 bits + 8/64 + 32/(64*256) bits of constants per weight
// (Dettmers et al. 2023, section 3).
inline constexpr double kNf4BitsPerWeight = 4.0 + 8.0 / 64 + 32.0 / (64 * 256);

// The class a model's compute falls in, as the zoo states it (transformer, cnn, rnn, flow,
// recsys, diffusion, diffusion-transformer, transformer-xl) or derived from its shape.
std::string ComputeClass(const Model& m);

void AddTerm(Estimate* e, std::string name, double value, std::string unit, std::string formula);

Status EstimateTraining(const Catalog& catalog, const Workload& w, const Hardware& hw,
                        const EstimateOptions& options, Estimate* e);
Status EstimateInference(const Catalog& catalog, const Workload& w, const Hardware& hw,
                         Estimate* out);
Status EstimateVisual(const Catalog& catalog, const Workload& w, const Hardware& hw, Estimate* out);
Status EstimatePreprocess(const Catalog& catalog, const Workload& w, const Hardware& hw,
                          Estimate* out);
Status EstimateClassicMl(const Catalog& catalog, const Workload& w, const Hardware& hw,
                         Estimate* out);

}  // namespace cloudfit

#endif  // CLOUDFIT_ESTIMATE_ESTIMATE_INTERNAL_H_

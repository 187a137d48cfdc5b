// Pieces of the estimator shared by its files: the device figures a roofline needs, named
// constants with their sources, and the per-kind estimators the dispatcher calls.
#ifndef CLOUDFIT_ESTIMATE_ESTIMATE_INTERNAL_H_
#define CLOUDFIT_ESTIMATE_ESTIMATE_INTERNAL_H_

#include <string>

#include "cloudfit/efficiency.h"
#include "cloudfit/estimate.h"

namespace cloudfit {

// CUDA context plus cuBLAS/cuDNN workspaces. PyTorch PR #86509 measured the context at 287 MB
// with lazy module loading (the default since CUDA 11.7) and 667 MB without; workspaces add
// about 200 MB. We take 500 MiB.
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

// What one device offers, at a given numeric format.
struct DeviceRates {
  std::string architecture;   // compute capability, or "cpu"
  std::string precision_key;  // the efficiency-table precision actually used
  double peak_flops = 0;
  double bandwidth_bytes_per_s = 0;
  double memory_bytes = 0;
};

// The peak a format runs at on this GPU: a format the GPU lacks falls back to the next wider
// one it has (bf16 -> fp16 on Volta/Turing, fp8 -> fp16 before Ada/Hopper, tf32 -> fp32).
DeviceRates GpuRates(const Accelerator& gpu, NumericFormat format);
DeviceRates CpuRates(const Hardware& hardware, NumericFormat format);
// The rates of the device a workload runs on (GPU or CPU), with the workload's calibration.
DeviceRates WorkloadRates(const Workload& w, const Hardware& hardware);

// The class a model's compute falls in, for efficiency lookups: transformer, cnn, rnn, flow,
// recsys.
std::string ComputeClass(const Model& m);

// The fraction of peak a class reaches: the architecture's efficiency times the class's fitted
// factor. Classes without calibration rows borrow their nearest relative's factor (U-Net
// diffusion from CNNs, diffusion transformers from transformers).
double ClassComputeEfficiency(const EfficiencyTable& table, const DeviceRates& rates,
                              const std::string& compute_class,
                              const EfficiencyFactor** row = nullptr);

// A two-term roofline: math at an efficiency-scaled peak plus DRAM traffic at an
// efficiency-scaled bandwidth. Summed rather than maxed because a training step interleaves
// compute-bound GEMMs with memory-bound elementwise kernels.
struct Roofline {
  double compute_s = 0;
  double memory_s = 0;
  double total_s() const { return compute_s + memory_s; }
};

void AddTerm(Estimate* e, std::string name, double value, std::string unit, std::string formula);

Status EstimateTraining(const Catalog& catalog, const Workload& w, const Hardware& hw,
                        Estimate* out);
Status EstimateInference(const Catalog& catalog, const Workload& w, const Hardware& hw,
                         Estimate* out);
Status EstimateVisual(const Catalog& catalog, const Workload& w, const Hardware& hw,
                      Estimate* out);
Status EstimatePreprocess(const Catalog& catalog, const Workload& w, const Hardware& hw,
                          Estimate* out);
Status EstimateClassicMl(const Catalog& catalog, const Workload& w, const Hardware& hw,
                         Estimate* out);

}  // namespace cloudfit

#endif  // CLOUDFIT_ESTIMATE_ESTIMATE_INTERNAL_H_

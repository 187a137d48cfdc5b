#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "measure/gpu_prober.h"
#include "util/strings.h"

namespace cloudfit {
namespace gpu_probing {

namespace {

// Fill bytes: 0x3C3C3C3C is 0.0115 as FP32; 0x3C3C is 0.0115 as BF16; 0x2424 is 0.0162 as FP16;
// 0x2C is 0.375 as FP8 E4M3 (exponent 5 - 7, mantissa 1.5).
const GemmSpec kGemmSpecs[] = {
    {"fp32", cuda::CUDA_R_32F, cuda::CUDA_R_32F, cuda::CUBLAS_COMPUTE_32F, 4, 4, 0x3C, 0x3C, 0,
     nullptr, false},
    {"tf32", cuda::CUDA_R_32F, cuda::CUDA_R_32F, cuda::CUBLAS_COMPUTE_32F_FAST_TF32, 4, 4, 0x3C,
     0x3C, 80, "TF32 tensor cores", false},
    {"fp16", cuda::CUDA_R_16F, cuda::CUDA_R_16F, cuda::CUBLAS_COMPUTE_32F, 2, 2, 0x24, 0x24, 0,
     nullptr, false},
    {"bf16", cuda::CUDA_R_16BF, cuda::CUDA_R_16BF, cuda::CUBLAS_COMPUTE_32F, 2, 2, 0x3C, 0x3C, 80,
     "BF16 tensor cores", false},
    // cuBLASLt's FP8 rules: A and B E4M3, C and D BF16, FP32 compute and scale, A transposed and
    // B not ("TN"), dimensions multiples of 16. Scale pointers left unset mean 1.0.
    {"fp8", cuda::CUDA_R_8F_E4M3, cuda::CUDA_R_16BF, cuda::CUBLAS_COMPUTE_32F, 1, 2, 0x2C, 0x3C, 89,
     "FP8 tensor cores", true},
};

std::string Upper(std::string s) {
  for (char& c : s) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return s;
}

}  // namespace

void Prober::MeasureGemms(const Gpu& gpu, GpuDeviceProbe* device) {
  api_.cuCtxSetCurrent(gpu.ctx);
  cuda::cublasLtHandle_t raw_handle = nullptr;
  cuda::cublasStatus_t s = lt_->cublasLtCreate(&raw_handle);
  std::string setup_error;
  if (s != cuda::CUBLAS_STATUS_SUCCESS) {
    setup_error = "cublasLtCreate: " + cuda::CublasStatusText(*lt_, s);
  }
  const cuda::CublasLtApi* lt = lt_;
  Owned<cuda::cublasLtHandle_t> handle(raw_handle,
                                       [lt](cuda::cublasLtHandle_t h) { lt->cublasLtDestroy(h); });
  Owned<CUdeviceptr> workspace;
  if (setup_error.empty()) {
    AllocDevice(gpu, plan_.workspace_bytes, &workspace, &setup_error);
  }

  for (const GemmSpec& spec : kGemmSpecs) {
    GpuGemmResult result;
    result.precision = spec.precision;
    if (!setup_error.empty()) {
      result.note = setup_error;
      device->gemm.push_back(std::move(result));
      continue;
    }
    if (gpu.cc < spec.min_cc) {
      result.note = fmt::format("no {} before compute capability {}.{}", spec.min_why,
                                spec.min_cc / 10, spec.min_cc % 10);
      device->gemm.push_back(std::move(result));
      continue;
    }
    std::vector<std::string> errors;
    for (int n : plan_.gemm_sizes) {
      Progress(fmt::format("GPU {}: {} GEMM {}^3", gpu.index, Upper(spec.precision), n));
      std::string error;
      double seconds = TimeGemm(gpu, spec, n, handle.get(), workspace.get(), &error);
      if (seconds <= 0) {
        errors.push_back(fmt::format("{}^3: {}", n, error));
        continue;
      }
      double rate = 2.0 * n * n * static_cast<double>(n) / seconds;
      result.supported = true;
      if (rate > result.flops_per_s) {
        result.flops_per_s = rate;
        result.size = n;
      }
    }
    result.note = Join(errors, "; ");
    device->gemm.push_back(std::move(result));
  }
}

double Prober::TimeGemm(const Gpu& gpu, const GemmSpec& spec, int n, cuda::cublasLtHandle_t handle,
                        CUdeviceptr workspace, std::string* error) const {
  const size_t elements = static_cast<size_t>(n) * static_cast<size_t>(n);
  const size_t need = elements * (2 * spec.ab_size + spec.cd_size);
  if (need > FreeBytes(gpu)) {
    *error = fmt::format("needs {} and the GPU has less free", MiBText(need));
    return 0;
  }
  Owned<CUdeviceptr> a;
  Owned<CUdeviceptr> b;
  Owned<CUdeviceptr> d;
  if (!AllocDevice(gpu, elements * spec.ab_size, &a, error) ||
      !AllocDevice(gpu, elements * spec.ab_size, &b, error) ||
      !AllocDevice(gpu, elements * spec.cd_size, &d, error) ||
      !Fill(gpu, a.get(), spec.ab_fill, elements * spec.ab_size, error) ||
      !Fill(gpu, b.get(), spec.ab_fill, elements * spec.ab_size, error) ||
      !Fill(gpu, d.get(), spec.cd_fill, elements * spec.cd_size, error)) {
    return 0;
  }

  const cuda::CublasLtApi* lt = lt_;
  auto status_error = [&](const char* call, cuda::cublasStatus_t s) {
    *error = fmt::format("{}: {}", call, cuda::CublasStatusText(*lt, s));
    return 0.0;
  };
  cuda::cublasStatus_t s;

  cuda::cublasLtMatmulDesc_t raw_desc = nullptr;
  s = lt->cublasLtMatmulDescCreate(&raw_desc, spec.compute, cuda::CUDA_R_32F);
  Owned<cuda::cublasLtMatmulDesc_t> desc(
      raw_desc, [lt](cuda::cublasLtMatmulDesc_t x) { lt->cublasLtMatmulDescDestroy(x); });
  if (s != cuda::CUBLAS_STATUS_SUCCESS) return status_error("cublasLtMatmulDescCreate", s);
  const int32_t trans_a = spec.fp8_layout ? cuda::CUBLAS_OP_T : cuda::CUBLAS_OP_N;
  const int32_t trans_b = cuda::CUBLAS_OP_N;
  s = lt->cublasLtMatmulDescSetAttribute(desc.get(), cuda::CUBLASLT_MATMUL_DESC_TRANSA, &trans_a,
                                         sizeof(trans_a));
  if (s != cuda::CUBLAS_STATUS_SUCCESS) return status_error("set TRANSA", s);
  s = lt->cublasLtMatmulDescSetAttribute(desc.get(), cuda::CUBLASLT_MATMUL_DESC_TRANSB, &trans_b,
                                         sizeof(trans_b));
  if (s != cuda::CUBLAS_STATUS_SUCCESS) return status_error("set TRANSB", s);
  if (spec.fp8_layout) {
    // Fast accumulation (no periodic promotion to FP32 inside the kernel): the faster mode,
    // the one training frameworks use for FP8 forward GEMMs.
    const int8_t fast_accum = 1;
    s = lt->cublasLtMatmulDescSetAttribute(desc.get(), cuda::CUBLASLT_MATMUL_DESC_FAST_ACCUM,
                                           &fast_accum, sizeof(fast_accum));
    if (s != cuda::CUBLAS_STATUS_SUCCESS) return status_error("set FAST_ACCUM", s);
  }

  // Column-major layouts; with every dimension n, op(A) transposed or not has the same shape
  // (rows = K, cols = M, ld = K for the transposed A).
  auto make_layout = [&](cuda::cudaDataType_t type, Owned<cuda::cublasLtMatrixLayout_t>* out) {
    cuda::cublasLtMatrixLayout_t raw = nullptr;
    cuda::cublasStatus_t st = lt->cublasLtMatrixLayoutCreate(&raw, type, n, n, n);
    *out = Owned<cuda::cublasLtMatrixLayout_t>(
        raw, [lt](cuda::cublasLtMatrixLayout_t x) { lt->cublasLtMatrixLayoutDestroy(x); });
    return st;
  };
  Owned<cuda::cublasLtMatrixLayout_t> a_layout;
  Owned<cuda::cublasLtMatrixLayout_t> b_layout;
  Owned<cuda::cublasLtMatrixLayout_t> d_layout;
  if ((s = make_layout(spec.ab_type, &a_layout)) != cuda::CUBLAS_STATUS_SUCCESS ||
      (s = make_layout(spec.ab_type, &b_layout)) != cuda::CUBLAS_STATUS_SUCCESS ||
      (s = make_layout(spec.cd_type, &d_layout)) != cuda::CUBLAS_STATUS_SUCCESS) {
    return status_error("cublasLtMatrixLayoutCreate", s);
  }

  cuda::cublasLtMatmulPreference_t raw_pref = nullptr;
  s = lt->cublasLtMatmulPreferenceCreate(&raw_pref);
  Owned<cuda::cublasLtMatmulPreference_t> pref(raw_pref, [lt](cuda::cublasLtMatmulPreference_t x) {
    lt->cublasLtMatmulPreferenceDestroy(x);
  });
  if (s != cuda::CUBLAS_STATUS_SUCCESS) return status_error("cublasLtMatmulPreferenceCreate", s);
  const uint64_t workspace_bytes = plan_.workspace_bytes;
  s = lt->cublasLtMatmulPreferenceSetAttribute(pref.get(),
                                               cuda::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                               &workspace_bytes, sizeof(workspace_bytes));
  if (s != cuda::CUBLAS_STATUS_SUCCESS) return status_error("set MAX_WORKSPACE_BYTES", s);

  api_.cuCtxSetCurrent(gpu.ctx);
  cuda::cublasLtMatmulHeuristicResult_t heuristic = {};
  int found = 0;
  s = lt->cublasLtMatmulAlgoGetHeuristic(handle, desc.get(), a_layout.get(), b_layout.get(),
                                         d_layout.get(), d_layout.get(), pref.get(), 1, &heuristic,
                                         &found);
  if (s != cuda::CUBLAS_STATUS_SUCCESS) {
    return status_error("no cuBLASLt kernel (cublasLtMatmulAlgoGetHeuristic)", s);
  }
  if (found < 1 || heuristic.state != cuda::CUBLAS_STATUS_SUCCESS) {
    *error = "cuBLASLt offers no kernel for this precision on this GPU";
    return 0;
  }

  const float alpha = 1.0f;
  const float beta = 0.0f;
  void* a_ptr = AsPointer(a.get());
  void* b_ptr = AsPointer(b.get());
  void* d_ptr = AsPointer(d.get());
  void* workspace_ptr = AsPointer(workspace);
  auto op = [&](std::string* op_error) {
    cuda::cublasStatus_t st =
        lt->cublasLtMatmul(handle, desc.get(), &alpha, a_ptr, a_layout.get(), b_ptr, b_layout.get(),
                           &beta, d_ptr, d_layout.get(), d_ptr, d_layout.get(), &heuristic.algo,
                           workspace_ptr, plan_.workspace_bytes, gpu.stream);
    if (st == cuda::CUBLAS_STATUS_SUCCESS) return true;
    *op_error = "cublasLtMatmul: " + cuda::CublasStatusText(*lt, st);
    return false;
  };
  return TimeOp(gpu, op, error);
}

}  // namespace gpu_probing
}  // namespace cloudfit

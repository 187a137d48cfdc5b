// Checks the hand-written declarations of src/measure/cuda_api.h against the real CUDA headers:
// every constant has the real value, every struct the real layout, and every function pointer
// the real function's calling shape (same arity; each parameter and the result of the same size
// and kind: pointer, integer or enum, floating point; pointed-to data of the same layout, where
// an opaque handle's target matches any struct). Built only where CMake finds the CUDA toolkit;
// the checks are static_asserts, so building it is the test.
//
// cuda_api.h comes first: cuda.h defines macros (cuMemAlloc -> cuMemAlloc_v2, ...) that would
// rename the table's members if they were seen after it.
// clang-format off
#include "measure/cuda_api.h"
// clang-format on

#include <cstddef>
#include <iostream>
#include <type_traits>

#include <cublasLt.h>
#include <cuda.h>
#include <gtest/gtest.h>

#if __has_include(<nccl.h>)
#include <nccl.h>
#define CLOUDFIT_HAVE_NCCL_H 1
#endif
#if __has_include(<nvml.h>)
#include <nvml.h>
#define CLOUDFIT_HAVE_NVML_H 1
#endif

// The driver API's versioned names, with the macros out of the way so that the table's members
// can be named.
#undef cuDeviceTotalMem
#undef cuMemGetInfo
#undef cuMemAlloc
#undef cuMemFree
#undef cuMemsetD8
#undef cuMemcpyHtoDAsync
#undef cuMemcpyDtoHAsync
#undef cuMemcpyDtoDAsync
#undef cuStreamDestroy
#undef cuEventDestroy
#undef cuEventElapsedTime
#undef cuDevicePrimaryCtxRelease
#undef cuDeviceGetUuid
#ifdef CLOUDFIT_HAVE_NVML_H
#undef nvmlInit
#undef nvmlDeviceGetCount
#undef nvmlDeviceGetHandleByIndex
#endif

namespace {

namespace cuda = cloudfit::cuda;

template <typename T, typename = void>
struct IsComplete : std::false_type {};
template <typename T>
struct IsComplete<T, std::void_t<decltype(sizeof(T))>> : std::true_type {};

template <typename A, typename B>
constexpr bool SameAbi();

// What a pointer points at: an opaque handle's target (an incomplete struct on either side)
// matches any struct; anything else must have the same layout.
template <typename A, typename B>
constexpr bool SamePointee() {
  using X = std::remove_cv_t<A>;
  using Y = std::remove_cv_t<B>;
  if constexpr (std::is_class_v<X> && std::is_class_v<Y> &&
                (!IsComplete<X>::value || !IsComplete<Y>::value)) {
    return true;
  } else {
    return SameAbi<X, Y>();
  }
}

template <typename A, typename B>
constexpr bool SameAbi() {
  using X = std::remove_cv_t<A>;
  using Y = std::remove_cv_t<B>;
  if constexpr (std::is_void_v<X> || std::is_void_v<Y>) {
    return std::is_void_v<X> && std::is_void_v<Y>;
  } else if constexpr (std::is_pointer_v<X> || std::is_pointer_v<Y>) {
    if constexpr (std::is_pointer_v<X> && std::is_pointer_v<Y>) {
      return SamePointee<std::remove_pointer_t<X>, std::remove_pointer_t<Y>>();
    } else {
      return false;
    }
  } else if constexpr (std::is_integral_v<X> && std::is_integral_v<Y>) {
    return sizeof(X) == sizeof(Y) && std::is_signed_v<X> == std::is_signed_v<Y>;
  } else if constexpr ((std::is_integral_v<X> || std::is_enum_v<X>)&&(std::is_integral_v<Y> ||
                                                                      std::is_enum_v<Y>)) {
    return sizeof(X) == sizeof(Y);  // an enum passed as int
  } else if constexpr (std::is_floating_point_v<X> || std::is_floating_point_v<Y>) {
    return std::is_same_v<X, Y>;
  } else if constexpr (std::is_class_v<X> && std::is_class_v<Y>) {
    return sizeof(X) == sizeof(Y) && alignof(X) == alignof(Y);
  } else {
    return false;
  }
}

template <typename Ours, typename Real>
struct Signature;
template <typename R1, typename... A1, typename R2, typename... A2>
struct Signature<R1 (*)(A1...), R2 (*)(A2...)> {
  static constexpr bool Same() {
    if constexpr (sizeof...(A1) != sizeof...(A2)) {
      return false;
    } else {
      return SameAbi<R1, R2>() && (SameAbi<A1, A2>() && ...);
    }
  }
};

#define CHECK_FN(table, member, real)                                                \
  static_assert(Signature<decltype(cuda::table::member), decltype(&::real)>::Same(), \
                #table "::" #member " does not match " #real)

// ---- CUDA driver API ----

CHECK_FN(DriverApi, cuGetErrorName, cuGetErrorName);
CHECK_FN(DriverApi, cuGetErrorString, cuGetErrorString);
CHECK_FN(DriverApi, cuInit, cuInit);
CHECK_FN(DriverApi, cuDriverGetVersion, cuDriverGetVersion);
CHECK_FN(DriverApi, cuDeviceGetCount, cuDeviceGetCount);
CHECK_FN(DriverApi, cuDeviceGet, cuDeviceGet);
CHECK_FN(DriverApi, cuDeviceGetName, cuDeviceGetName);
CHECK_FN(DriverApi, cuDeviceGetUuid, cuDeviceGetUuid_v2);
CHECK_FN(DriverApi, cuDeviceTotalMem, cuDeviceTotalMem_v2);
CHECK_FN(DriverApi, cuDeviceGetAttribute, cuDeviceGetAttribute);
CHECK_FN(DriverApi, cuDeviceCanAccessPeer, cuDeviceCanAccessPeer);
CHECK_FN(DriverApi, cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain);
CHECK_FN(DriverApi, cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2);
CHECK_FN(DriverApi, cuCtxSetCurrent, cuCtxSetCurrent);
CHECK_FN(DriverApi, cuCtxSynchronize, cuCtxSynchronize);
CHECK_FN(DriverApi, cuCtxEnablePeerAccess, cuCtxEnablePeerAccess);
CHECK_FN(DriverApi, cuMemGetInfo, cuMemGetInfo_v2);
CHECK_FN(DriverApi, cuMemAlloc, cuMemAlloc_v2);
CHECK_FN(DriverApi, cuMemFree, cuMemFree_v2);
CHECK_FN(DriverApi, cuMemHostAlloc, cuMemHostAlloc);
CHECK_FN(DriverApi, cuMemFreeHost, cuMemFreeHost);
CHECK_FN(DriverApi, cuMemsetD8, cuMemsetD8_v2);
CHECK_FN(DriverApi, cuMemcpyHtoDAsync, cuMemcpyHtoDAsync_v2);
CHECK_FN(DriverApi, cuMemcpyDtoHAsync, cuMemcpyDtoHAsync_v2);
CHECK_FN(DriverApi, cuMemcpyDtoDAsync, cuMemcpyDtoDAsync_v2);
CHECK_FN(DriverApi, cuMemcpyPeerAsync, cuMemcpyPeerAsync);
CHECK_FN(DriverApi, cuStreamCreate, cuStreamCreate);
CHECK_FN(DriverApi, cuStreamSynchronize, cuStreamSynchronize);
CHECK_FN(DriverApi, cuStreamDestroy, cuStreamDestroy_v2);
CHECK_FN(DriverApi, cuEventCreate, cuEventCreate);
CHECK_FN(DriverApi, cuEventRecord, cuEventRecord);
CHECK_FN(DriverApi, cuEventSynchronize, cuEventSynchronize);
CHECK_FN(DriverApi, cuEventElapsedTime, cuEventElapsedTime_v2);
CHECK_FN(DriverApi, cuEventDestroy, cuEventDestroy_v2);

static_assert(std::is_same_v<cuda::CUdeviceptr, ::CUdeviceptr>);
static_assert(std::is_same_v<cuda::CUdevice, ::CUdevice>);
static_assert(sizeof(cuda::CUresult) == sizeof(::CUresult));
static_assert(sizeof(cuda::CUuuid) == sizeof(::CUuuid));
static_assert(offsetof(cuda::CUuuid, bytes) == offsetof(::CUuuid, bytes));

static_assert(cuda::CUDA_SUCCESS == ::CUDA_SUCCESS);
static_assert(cuda::CUDA_ERROR_OUT_OF_MEMORY == ::CUDA_ERROR_OUT_OF_MEMORY);
static_assert(cuda::CUDA_ERROR_STUB_LIBRARY == ::CUDA_ERROR_STUB_LIBRARY);
static_assert(cuda::CUDA_ERROR_SYSTEM_DRIVER_MISMATCH == ::CUDA_ERROR_SYSTEM_DRIVER_MISMATCH);
static_assert(cuda::CUDA_ERROR_NO_DEVICE == ::CUDA_ERROR_NO_DEVICE);
static_assert(cuda::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED ==
              ::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
static_assert(cuda::CUDA_ERROR_TOO_MANY_PEERS == ::CUDA_ERROR_TOO_MANY_PEERS);
static_assert(cuda::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT ==
              ::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
static_assert(cuda::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ==
              ::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
static_assert(cuda::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR ==
              ::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
static_assert(cuda::CU_STREAM_NON_BLOCKING == ::CU_STREAM_NON_BLOCKING);
static_assert(cuda::CU_EVENT_DEFAULT == ::CU_EVENT_DEFAULT);
// A macro in cuda.h: take its value, then let the name through.
constexpr unsigned int kRealMemHostAllocPortable = CU_MEMHOSTALLOC_PORTABLE;
#undef CU_MEMHOSTALLOC_PORTABLE
static_assert(cuda::CU_MEMHOSTALLOC_PORTABLE == kRealMemHostAllocPortable);

// ---- cuBLASLt ----

CHECK_FN(CublasLtApi, cublasLtCreate, cublasLtCreate);
CHECK_FN(CublasLtApi, cublasLtDestroy, cublasLtDestroy);
CHECK_FN(CublasLtApi, cublasLtGetVersion, cublasLtGetVersion);
CHECK_FN(CublasLtApi, cublasLtGetStatusString, cublasLtGetStatusString);
CHECK_FN(CublasLtApi, cublasLtMatmulDescCreate, cublasLtMatmulDescCreate);
CHECK_FN(CublasLtApi, cublasLtMatmulDescDestroy, cublasLtMatmulDescDestroy);
CHECK_FN(CublasLtApi, cublasLtMatmulDescSetAttribute, cublasLtMatmulDescSetAttribute);
CHECK_FN(CublasLtApi, cublasLtMatrixLayoutCreate, cublasLtMatrixLayoutCreate);
CHECK_FN(CublasLtApi, cublasLtMatrixLayoutDestroy, cublasLtMatrixLayoutDestroy);
CHECK_FN(CublasLtApi, cublasLtMatmulPreferenceCreate, cublasLtMatmulPreferenceCreate);
CHECK_FN(CublasLtApi, cublasLtMatmulPreferenceSetAttribute, cublasLtMatmulPreferenceSetAttribute);
CHECK_FN(CublasLtApi, cublasLtMatmulPreferenceDestroy, cublasLtMatmulPreferenceDestroy);
CHECK_FN(CublasLtApi, cublasLtMatmulAlgoGetHeuristic, cublasLtMatmulAlgoGetHeuristic);
CHECK_FN(CublasLtApi, cublasLtMatmul, cublasLtMatmul);

static_assert(sizeof(cuda::cublasLtMatmulAlgo_t) == sizeof(::cublasLtMatmulAlgo_t));
static_assert(alignof(cuda::cublasLtMatmulAlgo_t) == alignof(::cublasLtMatmulAlgo_t));
using OurResult = cuda::cublasLtMatmulHeuristicResult_t;
using RealResult = ::cublasLtMatmulHeuristicResult_t;
static_assert(sizeof(OurResult) == sizeof(RealResult));
static_assert(alignof(OurResult) == alignof(RealResult));
static_assert(offsetof(OurResult, algo) == offsetof(RealResult, algo));
static_assert(offsetof(OurResult, workspaceSize) == offsetof(RealResult, workspaceSize));
static_assert(offsetof(OurResult, state) == offsetof(RealResult, state));
static_assert(offsetof(OurResult, wavesCount) == offsetof(RealResult, wavesCount));
static_assert(offsetof(OurResult, reserved) == offsetof(RealResult, reserved));

static_assert(cuda::CUBLAS_STATUS_SUCCESS == ::CUBLAS_STATUS_SUCCESS);
static_assert(cuda::CUBLAS_STATUS_NOT_SUPPORTED == ::CUBLAS_STATUS_NOT_SUPPORTED);
static_assert(cuda::CUBLAS_COMPUTE_32F == ::CUBLAS_COMPUTE_32F);
static_assert(cuda::CUBLAS_COMPUTE_32F_FAST_TF32 == ::CUBLAS_COMPUTE_32F_FAST_TF32);
static_assert(cuda::CUDA_R_32F == ::CUDA_R_32F);
static_assert(cuda::CUDA_R_16F == ::CUDA_R_16F);
static_assert(cuda::CUDA_R_16BF == ::CUDA_R_16BF);
static_assert(cuda::CUDA_R_8F_E4M3 == ::CUDA_R_8F_E4M3);
static_assert(cuda::CUBLAS_OP_N == ::CUBLAS_OP_N);
static_assert(cuda::CUBLAS_OP_T == ::CUBLAS_OP_T);
static_assert(cuda::CUBLASLT_MATMUL_DESC_TRANSA == ::CUBLASLT_MATMUL_DESC_TRANSA);
static_assert(cuda::CUBLASLT_MATMUL_DESC_TRANSB == ::CUBLASLT_MATMUL_DESC_TRANSB);
static_assert(cuda::CUBLASLT_MATMUL_DESC_FAST_ACCUM == ::CUBLASLT_MATMUL_DESC_FAST_ACCUM);
static_assert(cuda::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES ==
              ::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES);

// ---- NCCL ----

#ifdef CLOUDFIT_HAVE_NCCL_H
CHECK_FN(NcclApi, ncclGetVersion, ncclGetVersion);
CHECK_FN(NcclApi, ncclGetErrorString, ncclGetErrorString);
CHECK_FN(NcclApi, ncclCommInitAll, ncclCommInitAll);
CHECK_FN(NcclApi, ncclCommDestroy, ncclCommDestroy);
CHECK_FN(NcclApi, ncclAllReduce, ncclAllReduce);
CHECK_FN(NcclApi, ncclGroupStart, ncclGroupStart);
CHECK_FN(NcclApi, ncclGroupEnd, ncclGroupEnd);
static_assert(cuda::ncclSuccess == ::ncclSuccess);
static_assert(cuda::ncclSum == ::ncclSum);
static_assert(cuda::ncclFloat == ::ncclFloat);
static_assert(cuda::ncclFloat == ::ncclFloat32);
#endif

// ---- NVML ----

#ifdef CLOUDFIT_HAVE_NVML_H
CHECK_FN(NvmlApi, nvmlInit, nvmlInit_v2);
CHECK_FN(NvmlApi, nvmlShutdown, nvmlShutdown);
CHECK_FN(NvmlApi, nvmlErrorString, nvmlErrorString);
CHECK_FN(NvmlApi, nvmlSystemGetDriverVersion, nvmlSystemGetDriverVersion);
CHECK_FN(NvmlApi, nvmlDeviceGetCount, nvmlDeviceGetCount_v2);
CHECK_FN(NvmlApi, nvmlDeviceGetHandleByIndex, nvmlDeviceGetHandleByIndex_v2);
CHECK_FN(NvmlApi, nvmlDeviceGetName, nvmlDeviceGetName);
CHECK_FN(NvmlApi, nvmlDeviceGetUtilizationRates, nvmlDeviceGetUtilizationRates);
CHECK_FN(NvmlApi, nvmlDeviceGetMemoryInfo, nvmlDeviceGetMemoryInfo);
CHECK_FN(NvmlApi, nvmlDeviceGetPowerUsage, nvmlDeviceGetPowerUsage);
CHECK_FN(NvmlApi, nvmlDeviceGetClockInfo, nvmlDeviceGetClockInfo);
static_assert(sizeof(cuda::nvmlMemory_t) == sizeof(::nvmlMemory_t));
static_assert(offsetof(cuda::nvmlMemory_t, used) == offsetof(::nvmlMemory_t, used));
static_assert(sizeof(cuda::nvmlUtilization_t) == sizeof(::nvmlUtilization_t));
static_assert(cuda::NVML_SUCCESS == ::NVML_SUCCESS);
static_assert(cuda::NVML_CLOCK_SM == ::NVML_CLOCK_SM);
static_assert(cuda::NVML_CLOCK_MEM == ::NVML_CLOCK_MEM);
constexpr unsigned int kRealNameSize = NVML_DEVICE_NAME_V2_BUFFER_SIZE;
constexpr unsigned int kRealDriverVersionSize = NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE;
#undef NVML_DEVICE_NAME_V2_BUFFER_SIZE
#undef NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE
static_assert(cuda::NVML_DEVICE_NAME_V2_BUFFER_SIZE == kRealNameSize);
static_assert(cuda::NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE == kRealDriverVersionSize);
#endif

// The comparison itself must tell mismatches apart, or the asserts above prove nothing.
static_assert(!SameAbi<int*, size_t*>());         // cuDeviceTotalMem v1 took unsigned int*
static_assert(!SameAbi<unsigned int, size_t>());  // ... and v1 sizes were 32-bit
static_assert(!SameAbi<cuda::CUdeviceptr, void*>());
static_assert(!SameAbi<float*, double*>());
static_assert(!Signature<int (*)(int), int (*)(int, int)>::Same());
static_assert(SameAbi<cuda::CUcontext, ::CUcontext>());

TEST(GpuCudaAbiTest, DeclarationsMatchTheToolkitHeaders) {
  // Everything is checked at compile time; this records which headers took part.
  std::cout << "checked against CUDA " << CUDA_VERSION << ", cuBLAS " << CUBLAS_VERSION
#ifdef CLOUDFIT_HAVE_NCCL_H
            << ", NCCL " << NCCL_VERSION_CODE
#endif
#ifdef CLOUDFIT_HAVE_NVML_H
            << ", NVML API " << NVML_API_VERSION
#endif
            << "\n";
  SUCCEED();
}

}  // namespace

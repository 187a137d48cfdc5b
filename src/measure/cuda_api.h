// The few parts of the CUDA driver API, cuBLASLt, NVML and NCCL that the GPU probe and sampler
// use, declared here and found with dlopen/dlsym at run time. Nothing includes a CUDA header:
// the machines that build cloudfit need not have the toolkit, and the machines that run it need
// not have a GPU. Every type, constant and signature below copies the real headers (cuda.h,
// cublasLt.h, library_types.h, nvml.h, nccl.h); tests/cuda_abi_test.cc checks them against those
// headers wherever the toolkit is installed.
//
// Symbol names are the ones the headers' macros map to (cuMemAlloc -> cuMemAlloc_v2 and so on):
// the unversioned names are kept by the driver for old binaries and some have other signatures.
#ifndef CLOUDFIT_MEASURE_CUDA_API_H_
#define CLOUDFIT_MEASURE_CUDA_API_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cloudfit {
class GpuSampler;
struct GpuProbeOptions;
struct GpuSystemProbe;
}  // namespace cloudfit

namespace cloudfit::cuda {

// ---- CUDA driver API (libcuda.so.1, installed with the driver) ----

using CUresult = int;  // enum cudaError_enum
using CUdevice = int;
using CUdeviceptr = unsigned long long;  // CUdeviceptr_v2 on 64-bit hosts
struct CUctx_st;
struct CUstream_st;
struct CUevent_st;
using CUcontext = CUctx_st*;
using CUstream = CUstream_st*;
using CUevent = CUevent_st*;
struct CUuuid {
  char bytes[16];
};

inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
inline constexpr CUresult CUDA_ERROR_STUB_LIBRARY = 34;  // the toolkit's link stub, not a driver
inline constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
inline constexpr CUresult CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704;
inline constexpr CUresult CUDA_ERROR_TOO_MANY_PEERS = 711;
// The kernel module and libcuda come from different driver releases.
inline constexpr CUresult CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803;

// CUdevice_attribute values.
inline constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;

inline constexpr unsigned int CU_MEMHOSTALLOC_PORTABLE = 0x01;
inline constexpr unsigned int CU_STREAM_NON_BLOCKING = 0x1;
inline constexpr unsigned int CU_EVENT_DEFAULT = 0x0;

struct DriverApi {
  std::string library;  // the file dlopen opened

  CUresult (*cuGetErrorName)(CUresult error, const char** str) = nullptr;
  CUresult (*cuGetErrorString)(CUresult error, const char** str) = nullptr;
  CUresult (*cuInit)(unsigned int flags) = nullptr;
  CUresult (*cuDriverGetVersion)(int* version) = nullptr;
  CUresult (*cuDeviceGetCount)(int* count) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice* device, int ordinal) = nullptr;
  CUresult (*cuDeviceGetName)(char* name, int len, CUdevice dev) = nullptr;
  CUresult (*cuDeviceGetUuid)(CUuuid* uuid, CUdevice dev) = nullptr;    // _v2 where present
  CUresult (*cuDeviceTotalMem)(size_t* bytes, CUdevice dev) = nullptr;  // _v2
  CUresult (*cuDeviceGetAttribute)(int* value, int attrib, CUdevice dev) = nullptr;
  CUresult (*cuDeviceCanAccessPeer)(int* can_access, CUdevice dev, CUdevice peer) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext* ctx, CUdevice dev) = nullptr;
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice dev) = nullptr;  // _v2
  CUresult (*cuCtxSetCurrent)(CUcontext ctx) = nullptr;
  CUresult (*cuCtxSynchronize)() = nullptr;
  CUresult (*cuCtxEnablePeerAccess)(CUcontext peer, unsigned int flags) = nullptr;
  CUresult (*cuMemGetInfo)(size_t* free_bytes, size_t* total_bytes) = nullptr;  // _v2
  CUresult (*cuMemAlloc)(CUdeviceptr* dptr, size_t bytes) = nullptr;            // _v2
  CUresult (*cuMemFree)(CUdeviceptr dptr) = nullptr;                            // _v2
  CUresult (*cuMemHostAlloc)(void** pp, size_t bytes, unsigned int flags) = nullptr;
  CUresult (*cuMemFreeHost)(void* p) = nullptr;
  CUresult (*cuMemsetD8)(CUdeviceptr dst, unsigned char value, size_t n) = nullptr;  // _v2
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr dst, const void* src, size_t bytes,
                                CUstream stream) = nullptr;  // _v2
  CUresult (*cuMemcpyDtoHAsync)(void* dst, CUdeviceptr src, size_t bytes,
                                CUstream stream) = nullptr;  // _v2
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                                CUstream stream) = nullptr;  // _v2
  CUresult (*cuMemcpyPeerAsync)(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src,
                                CUcontext src_ctx, size_t bytes, CUstream stream) = nullptr;
  CUresult (*cuStreamCreate)(CUstream* stream, unsigned int flags) = nullptr;
  CUresult (*cuStreamSynchronize)(CUstream stream) = nullptr;
  CUresult (*cuStreamDestroy)(CUstream stream) = nullptr;  // _v2
  CUresult (*cuEventCreate)(CUevent* event, unsigned int flags) = nullptr;
  CUresult (*cuEventRecord)(CUevent event, CUstream stream) = nullptr;
  CUresult (*cuEventSynchronize)(CUevent event) = nullptr;
  CUresult (*cuEventElapsedTime)(float* ms, CUevent start, CUevent end) = nullptr;  // _v2
  CUresult (*cuEventDestroy)(CUevent event) = nullptr;                              // _v2
};

// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)", or the bare number when the driver cannot say.
std::string CudaErrorText(const DriverApi& api, CUresult result);

// ---- cuBLASLt (libcublasLt.so.N, shipped with the toolkit and with PyTorch's wheels) ----

using cublasStatus_t = int;
using cublasComputeType_t = int;
using cudaDataType_t = int;
struct cublasLtContext;
struct cublasLtMatmulDescOpaque;
struct cublasLtMatrixLayoutOpaque;
struct cublasLtMatmulPreferenceOpaque;
using cublasLtHandle_t = cublasLtContext*;
using cublasLtMatmulDesc_t = cublasLtMatmulDescOpaque*;
using cublasLtMatrixLayout_t = cublasLtMatrixLayoutOpaque*;
using cublasLtMatmulPreference_t = cublasLtMatmulPreferenceOpaque*;

// The algorithm and heuristic result travel by value through our memory, so their layout must
// be the real one.
struct cublasLtMatmulAlgo_t {
  uint64_t data[8];
};
struct cublasLtMatmulHeuristicResult_t {
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  cublasStatus_t state;
  float wavesCount;
  int reserved[4];
};
static_assert(sizeof(cublasLtMatmulHeuristicResult_t) == 96);

inline constexpr cublasStatus_t CUBLAS_STATUS_SUCCESS = 0;
inline constexpr cublasStatus_t CUBLAS_STATUS_NOT_SUPPORTED = 15;
inline constexpr cublasComputeType_t CUBLAS_COMPUTE_32F = 68;
inline constexpr cublasComputeType_t CUBLAS_COMPUTE_32F_FAST_TF32 = 77;
inline constexpr cudaDataType_t CUDA_R_32F = 0;
inline constexpr cudaDataType_t CUDA_R_16F = 2;
inline constexpr cudaDataType_t CUDA_R_16BF = 14;
inline constexpr cudaDataType_t CUDA_R_8F_E4M3 = 28;
inline constexpr int32_t CUBLAS_OP_N = 0;
inline constexpr int32_t CUBLAS_OP_T = 1;
// cublasLtMatmulDescAttributes_t: TRANSA/TRANSB take int32_t, FAST_ACCUM int8_t.
inline constexpr int CUBLASLT_MATMUL_DESC_TRANSA = 3;
inline constexpr int CUBLASLT_MATMUL_DESC_TRANSB = 4;
inline constexpr int CUBLASLT_MATMUL_DESC_FAST_ACCUM = 25;
// cublasLtMatmulPreferenceAttributes_t: uint64_t.
inline constexpr int CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1;

struct CublasLtApi {
  std::string library;

  cublasStatus_t (*cublasLtCreate)(cublasLtHandle_t* handle) = nullptr;
  cublasStatus_t (*cublasLtDestroy)(cublasLtHandle_t handle) = nullptr;
  size_t (*cublasLtGetVersion)() = nullptr;
  // Optional: cuBLASLt 11.4 and later. nullptr where the library lacks it.
  const char* (*cublasLtGetStatusString)(cublasStatus_t status) = nullptr;
  cublasStatus_t (*cublasLtMatmulDescCreate)(cublasLtMatmulDesc_t* desc,
                                             cublasComputeType_t compute_type,
                                             cudaDataType_t scale_type) = nullptr;
  cublasStatus_t (*cublasLtMatmulDescDestroy)(cublasLtMatmulDesc_t desc) = nullptr;
  cublasStatus_t (*cublasLtMatmulDescSetAttribute)(cublasLtMatmulDesc_t desc, int attr,
                                                   const void* buf, size_t size) = nullptr;
  cublasStatus_t (*cublasLtMatrixLayoutCreate)(cublasLtMatrixLayout_t* layout, cudaDataType_t type,
                                               uint64_t rows, uint64_t cols, int64_t ld) = nullptr;
  cublasStatus_t (*cublasLtMatrixLayoutDestroy)(cublasLtMatrixLayout_t layout) = nullptr;
  cublasStatus_t (*cublasLtMatmulPreferenceCreate)(cublasLtMatmulPreference_t* pref) = nullptr;
  cublasStatus_t (*cublasLtMatmulPreferenceSetAttribute)(cublasLtMatmulPreference_t pref, int attr,
                                                         const void* buf, size_t size) = nullptr;
  cublasStatus_t (*cublasLtMatmulPreferenceDestroy)(cublasLtMatmulPreference_t pref) = nullptr;
  cublasStatus_t (*cublasLtMatmulAlgoGetHeuristic)(
      cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a_desc,
      cublasLtMatrixLayout_t b_desc, cublasLtMatrixLayout_t c_desc, cublasLtMatrixLayout_t d_desc,
      cublasLtMatmulPreference_t pref, int requested, cublasLtMatmulHeuristicResult_t* results,
      int* returned) = nullptr;
  cublasStatus_t (*cublasLtMatmul)(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                   const void* alpha, const void* a, cublasLtMatrixLayout_t a_desc,
                                   const void* b, cublasLtMatrixLayout_t b_desc, const void* beta,
                                   const void* c, cublasLtMatrixLayout_t c_desc, void* d,
                                   cublasLtMatrixLayout_t d_desc, const cublasLtMatmulAlgo_t* algo,
                                   void* workspace, size_t workspace_bytes,
                                   CUstream stream) = nullptr;
};

// "CUBLAS_STATUS_NOT_SUPPORTED", or "cuBLAS status 15" with an older library.
std::string CublasStatusText(const CublasLtApi& api, cublasStatus_t status);

// ---- NVML (libnvidia-ml.so.1, installed with the driver) ----

using nvmlReturn_t = int;
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;
struct nvmlUtilization_t {
  unsigned int gpu;     // percent of time a kernel ran over the past sample period
  unsigned int memory;  // percent of time device memory was read or written
};
struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

inline constexpr nvmlReturn_t NVML_SUCCESS = 0;
inline constexpr int NVML_CLOCK_SM = 1;  // nvmlClockType_t
inline constexpr int NVML_CLOCK_MEM = 2;
inline constexpr unsigned int NVML_DEVICE_NAME_V2_BUFFER_SIZE = 96;
inline constexpr unsigned int NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80;

struct NvmlApi {
  std::string library;

  nvmlReturn_t (*nvmlInit)() = nullptr;  // nvmlInit_v2
  nvmlReturn_t (*nvmlShutdown)() = nullptr;
  const char* (*nvmlErrorString)(nvmlReturn_t result) = nullptr;
  nvmlReturn_t (*nvmlSystemGetDriverVersion)(char* version, unsigned int length) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetCount)(unsigned int* count) = nullptr;  // _v2
  nvmlReturn_t (*nvmlDeviceGetHandleByIndex)(unsigned int index,
                                             nvmlDevice_t* device) = nullptr;  // _v2
  nvmlReturn_t (*nvmlDeviceGetName)(nvmlDevice_t device, char* name, unsigned int length) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetUtilizationRates)(nvmlDevice_t device,
                                                nvmlUtilization_t* utilization) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetMemoryInfo)(nvmlDevice_t device, nvmlMemory_t* memory) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetPowerUsage)(nvmlDevice_t device, unsigned int* milliwatts) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetClockInfo)(nvmlDevice_t device, int type,
                                         unsigned int* mhz) = nullptr;
};

// nvmlErrorString's text, or the bare number.
std::string NvmlErrorText(const NvmlApi& api, nvmlReturn_t result);

// ---- NCCL (libnccl.so.2, from the nccl packages or PyTorch's wheels) ----

using ncclResult_t = int;
struct ncclComm;
using ncclComm_t = ncclComm*;
inline constexpr ncclResult_t ncclSuccess = 0;
inline constexpr int ncclSum = 0;    // ncclRedOp_t
inline constexpr int ncclFloat = 7;  // ncclDataType_t, same as ncclFloat32

struct NcclApi {
  std::string library;

  ncclResult_t (*ncclGetVersion)(int* version) = nullptr;
  const char* (*ncclGetErrorString)(ncclResult_t result) = nullptr;
  ncclResult_t (*ncclCommInitAll)(ncclComm_t* comms, int ndev, const int* devlist) = nullptr;
  ncclResult_t (*ncclCommDestroy)(ncclComm_t comm) = nullptr;
  ncclResult_t (*ncclAllReduce)(const void* send, void* recv, size_t count, int datatype, int op,
                                ncclComm_t comm, CUstream stream) = nullptr;
  ncclResult_t (*ncclGroupStart)() = nullptr;
  ncclResult_t (*ncclGroupEnd)() = nullptr;
};

std::string NcclErrorText(const NcclApi& api, ncclResult_t result);

// ---- Loading ----
//
// Each Load* opens the first of `names` that dlopen finds and resolves every function of its
// table. On failure it returns false and says why in `why_not`: which libraries were tried and
// what dlopen said, or which library lacks which symbol. Libraries are never closed: the CUDA
// libraries start threads and register exit handlers that must outlive the process's use.

bool LoadDriverApi(const std::vector<std::string>& names, DriverApi* api, std::string* why_not);
bool LoadCublasLtApi(const std::vector<std::string>& names, CublasLtApi* api, std::string* why_not);
bool LoadNvmlApi(const std::vector<std::string>& names, NvmlApi* api, std::string* why_not);
bool LoadNcclApi(const std::vector<std::string>& names, NcclApi* api, std::string* why_not);

// The library names tried by default, in order.
std::vector<std::string> DefaultDriverLibraries();  // libcuda.so.1
// libcublasLt.so.13, .12, .11, libcublasLt.so; with a driver version (cuDriverGetVersion, e.g.
// 12040) the majors newer than the driver supports are left out, since such a cuBLASLt loads
// but cannot create a handle.
std::vector<std::string> DefaultCublasLtLibraries(int cuda_driver_version = 0);
std::vector<std::string> DefaultNvmlLibraries();  // libnvidia-ml.so.1
std::vector<std::string> DefaultNcclLibraries();  // libnccl.so.2

// The same with the default names, loaded once per process (thread-safe) and kept. nullptr with
// `why_not` set when loading failed; later calls give the same answer.
const DriverApi* Driver(std::string* why_not);
const CublasLtApi* CublasLt(int cuda_driver_version, std::string* why_not);
const NvmlApi* Nvml(std::string* why_not);
const NcclApi* Nccl(std::string* why_not);

// ---- Measuring ----

// The libraries ProbeGpus measures with: the default ones in the program, tables of fakes in
// the tests, which run the whole probe without a GPU.
struct ProbeLibraries {
  const DriverApi* driver = nullptr;       // required
  const CublasLtApi* cublas_lt = nullptr;  // each of these may be missing, for the reason beside
  std::string cublas_lt_why;
  const NvmlApi* nvml = nullptr;
  std::string nvml_why;
  const NcclApi* nccl = nullptr;
  std::string nccl_why;
};

// ProbeGpus with the given libraries.
GpuSystemProbe ProbeGpusWith(const ProbeLibraries& libraries, const GpuProbeOptions& options);

// OpenGpuSampler with the given NVML; `nvml` must outlive the sampler.
std::unique_ptr<GpuSampler> OpenGpuSamplerWith(const NvmlApi& nvml, std::string* why_not);

// "12.4" from cuDriverGetVersion's 12040; "2.21.5" from ncclGetVersion's 22105 (or 2.8's 2803);
// "12.4.5" from cublasLtGetVersion's 120405.
std::string CudaVersionText(int version);
std::string NcclVersionText(int version);
std::string CublasVersionText(size_t version);

}  // namespace cloudfit::cuda

#endif  // CLOUDFIT_MEASURE_CUDA_API_H_

#include "measure/cuda_api.h"

#include <dlfcn.h>

#include <initializer_list>
#include <utility>

#include <fmt/format.h>

#include "util/strings.h"

namespace cloudfit::cuda {

namespace {

// One library being bound: opens it, then resolves symbols into a table's function pointers,
// remembering every required one that is missing so the error names them all at once.
class Binder {
 public:
  // Opens the first of `names` that dlopen accepts.
  bool Open(const std::vector<std::string>& names, std::string* why_not) {
    if (names.empty()) {
      *why_not = "no library name to try";
      return false;
    }
    std::vector<std::string> errors;
    for (const std::string& name : names) {
      dlerror();  // clear a stale message
      handle_ = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle_ != nullptr) {
        library_ = name;
        return true;
      }
      const char* error = dlerror();
      errors.push_back(error != nullptr ? error : name + ": dlopen failed");
    }
    *why_not = fmt::format("cannot load {} ({})", Join(names, ", "), Join(errors, "; "));
    return false;
  }

  // Stores the first of `symbols` found into *fn; the first name is the one the headers map to,
  // later ones are older names with the same signature, kept as fallbacks for older drivers.
  template <typename Fn>
  void Find(Fn* fn, std::initializer_list<const char*> symbols, bool required = true) {
    for (const char* symbol : symbols) {
      void* address = dlsym(handle_, symbol);
      if (address != nullptr) {
        // POSIX guarantees that an object pointer from dlsym converts to a function pointer.
        *fn = reinterpret_cast<Fn>(address);
        return;
      }
    }
    *fn = nullptr;
    if (required) missing_.push_back(*symbols.begin());
  }

  const std::string& library() const { return library_; }

  bool Finish(std::string* why_not) const {
    if (missing_.empty()) return true;
    *why_not = fmt::format("{} lacks {} (an older version than cloudfit needs)", library_,
                           Join(missing_, ", "));
    // The handle stays open: closing a half-initialised CUDA library is riskier than the few
    // kilobytes it keeps.
    return false;
  }

 private:
  void* handle_ = nullptr;
  std::string library_;
  std::vector<std::string> missing_;
};

// A table loaded once per process with the default names.
template <typename Api>
struct Loaded {
  Api api;
  bool ok = false;
  std::string why_not;
};

template <typename Api>
const Api* Answer(const Loaded<Api>& loaded, std::string* why_not) {
  if (loaded.ok) return &loaded.api;
  if (why_not != nullptr) *why_not = loaded.why_not;
  return nullptr;
}

}  // namespace

bool LoadDriverApi(const std::vector<std::string>& names, DriverApi* api, std::string* why_not) {
  Binder b;
  if (!b.Open(names, why_not)) return false;
  api->library = b.library();
  b.Find(&api->cuGetErrorName, {"cuGetErrorName"});
  b.Find(&api->cuGetErrorString, {"cuGetErrorString"});
  b.Find(&api->cuInit, {"cuInit"});
  b.Find(&api->cuDriverGetVersion, {"cuDriverGetVersion"});
  b.Find(&api->cuDeviceGetCount, {"cuDeviceGetCount"});
  b.Find(&api->cuDeviceGet, {"cuDeviceGet"});
  b.Find(&api->cuDeviceGetName, {"cuDeviceGetName"});
  // _v2 (driver 11.4+) and the original differ only in what they say of MIG instances.
  b.Find(&api->cuDeviceGetUuid, {"cuDeviceGetUuid_v2", "cuDeviceGetUuid"});
  b.Find(&api->cuDeviceTotalMem, {"cuDeviceTotalMem_v2"});
  b.Find(&api->cuDeviceGetAttribute, {"cuDeviceGetAttribute"});
  b.Find(&api->cuDeviceCanAccessPeer, {"cuDeviceCanAccessPeer"});
  b.Find(&api->cuDevicePrimaryCtxRetain, {"cuDevicePrimaryCtxRetain"});
  b.Find(&api->cuDevicePrimaryCtxRelease,
         {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"});
  b.Find(&api->cuCtxSetCurrent, {"cuCtxSetCurrent"});
  b.Find(&api->cuCtxSynchronize, {"cuCtxSynchronize"});
  b.Find(&api->cuCtxEnablePeerAccess, {"cuCtxEnablePeerAccess"});
  b.Find(&api->cuMemGetInfo, {"cuMemGetInfo_v2"});
  b.Find(&api->cuMemAlloc, {"cuMemAlloc_v2"});
  b.Find(&api->cuMemFree, {"cuMemFree_v2"});
  b.Find(&api->cuMemHostAlloc, {"cuMemHostAlloc"});
  b.Find(&api->cuMemFreeHost, {"cuMemFreeHost"});
  b.Find(&api->cuMemsetD8, {"cuMemsetD8_v2"});
  b.Find(&api->cuMemcpyHtoDAsync, {"cuMemcpyHtoDAsync_v2"});
  b.Find(&api->cuMemcpyDtoHAsync, {"cuMemcpyDtoHAsync_v2"});
  b.Find(&api->cuMemcpyDtoDAsync, {"cuMemcpyDtoDAsync_v2"});
  b.Find(&api->cuMemcpyPeerAsync, {"cuMemcpyPeerAsync"});
  b.Find(&api->cuStreamCreate, {"cuStreamCreate"});
  b.Find(&api->cuStreamSynchronize, {"cuStreamSynchronize"});
  b.Find(&api->cuStreamDestroy, {"cuStreamDestroy_v2"});
  b.Find(&api->cuEventCreate, {"cuEventCreate"});
  b.Find(&api->cuEventRecord, {"cuEventRecord"});
  b.Find(&api->cuEventSynchronize, {"cuEventSynchronize"});
  // CUDA 12.8 headers map cuEventElapsedTime to _v2; drivers before it have only the original,
  // which has the same signature and the same meaning for two events on one stream.
  b.Find(&api->cuEventElapsedTime, {"cuEventElapsedTime_v2", "cuEventElapsedTime"});
  b.Find(&api->cuEventDestroy, {"cuEventDestroy_v2"});
  return b.Finish(why_not);
}

bool LoadCublasLtApi(const std::vector<std::string>& names, CublasLtApi* api,
                     std::string* why_not) {
  Binder b;
  if (!b.Open(names, why_not)) return false;
  api->library = b.library();
  b.Find(&api->cublasLtCreate, {"cublasLtCreate"});
  b.Find(&api->cublasLtDestroy, {"cublasLtDestroy"});
  b.Find(&api->cublasLtGetVersion, {"cublasLtGetVersion"});
  b.Find(&api->cublasLtGetStatusString, {"cublasLtGetStatusString"}, /*required=*/false);
  b.Find(&api->cublasLtMatmulDescCreate, {"cublasLtMatmulDescCreate"});
  b.Find(&api->cublasLtMatmulDescDestroy, {"cublasLtMatmulDescDestroy"});
  b.Find(&api->cublasLtMatmulDescSetAttribute, {"cublasLtMatmulDescSetAttribute"});
  b.Find(&api->cublasLtMatrixLayoutCreate, {"cublasLtMatrixLayoutCreate"});
  b.Find(&api->cublasLtMatrixLayoutDestroy, {"cublasLtMatrixLayoutDestroy"});
  b.Find(&api->cublasLtMatmulPreferenceCreate, {"cublasLtMatmulPreferenceCreate"});
  b.Find(&api->cublasLtMatmulPreferenceSetAttribute, {"cublasLtMatmulPreferenceSetAttribute"});
  b.Find(&api->cublasLtMatmulPreferenceDestroy, {"cublasLtMatmulPreferenceDestroy"});
  b.Find(&api->cublasLtMatmulAlgoGetHeuristic, {"cublasLtMatmulAlgoGetHeuristic"});
  b.Find(&api->cublasLtMatmul, {"cublasLtMatmul"});
  return b.Finish(why_not);
}

bool LoadNvmlApi(const std::vector<std::string>& names, NvmlApi* api, std::string* why_not) {
  Binder b;
  if (!b.Open(names, why_not)) return false;
  api->library = b.library();
  b.Find(&api->nvmlInit, {"nvmlInit_v2"});
  b.Find(&api->nvmlShutdown, {"nvmlShutdown"});
  b.Find(&api->nvmlErrorString, {"nvmlErrorString"});
  b.Find(&api->nvmlSystemGetDriverVersion, {"nvmlSystemGetDriverVersion"});
  b.Find(&api->nvmlDeviceGetCount, {"nvmlDeviceGetCount_v2"});
  b.Find(&api->nvmlDeviceGetHandleByIndex, {"nvmlDeviceGetHandleByIndex_v2"});
  b.Find(&api->nvmlDeviceGetName, {"nvmlDeviceGetName"});
  b.Find(&api->nvmlDeviceGetUtilizationRates, {"nvmlDeviceGetUtilizationRates"});
  b.Find(&api->nvmlDeviceGetMemoryInfo, {"nvmlDeviceGetMemoryInfo"});
  b.Find(&api->nvmlDeviceGetPowerUsage, {"nvmlDeviceGetPowerUsage"});
  b.Find(&api->nvmlDeviceGetClockInfo, {"nvmlDeviceGetClockInfo"});
  return b.Finish(why_not);
}

bool LoadNcclApi(const std::vector<std::string>& names, NcclApi* api, std::string* why_not) {
  Binder b;
  if (!b.Open(names, why_not)) return false;
  api->library = b.library();
  b.Find(&api->ncclGetVersion, {"ncclGetVersion"});
  b.Find(&api->ncclGetErrorString, {"ncclGetErrorString"});
  b.Find(&api->ncclCommInitAll, {"ncclCommInitAll"});
  b.Find(&api->ncclCommDestroy, {"ncclCommDestroy"});
  b.Find(&api->ncclAllReduce, {"ncclAllReduce"});
  b.Find(&api->ncclGroupStart, {"ncclGroupStart"});
  b.Find(&api->ncclGroupEnd, {"ncclGroupEnd"});
  return b.Finish(why_not);
}

std::vector<std::string> DefaultDriverLibraries() { return {"libcuda.so.1"}; }

std::vector<std::string> DefaultCublasLtLibraries(int cuda_driver_version) {
  std::vector<std::string> names;
  for (int major : {13, 12, 11}) {
    // A cuBLASLt built for CUDA N needs a driver for CUDA N.0 or later (minor-version
    // compatibility within N).
    if (cuda_driver_version > 0 && cuda_driver_version < major * 1000) continue;
    names.push_back(fmt::format("libcublasLt.so.{}", major));
  }
  names.push_back("libcublasLt.so");
  return names;
}

std::vector<std::string> DefaultNvmlLibraries() { return {"libnvidia-ml.so.1"}; }
std::vector<std::string> DefaultNcclLibraries() { return {"libnccl.so.2"}; }

const DriverApi* Driver(std::string* why_not) {
  static const Loaded<DriverApi> loaded = [] {
    Loaded<DriverApi> l;
    l.ok = LoadDriverApi(DefaultDriverLibraries(), &l.api, &l.why_not);
    return l;
  }();
  return Answer(loaded, why_not);
}

const CublasLtApi* CublasLt(int cuda_driver_version, std::string* why_not) {
  static const Loaded<CublasLtApi> loaded = [cuda_driver_version] {
    Loaded<CublasLtApi> l;
    l.ok = LoadCublasLtApi(DefaultCublasLtLibraries(cuda_driver_version), &l.api, &l.why_not);
    return l;
  }();
  return Answer(loaded, why_not);
}

const NvmlApi* Nvml(std::string* why_not) {
  static const Loaded<NvmlApi> loaded = [] {
    Loaded<NvmlApi> l;
    l.ok = LoadNvmlApi(DefaultNvmlLibraries(), &l.api, &l.why_not);
    return l;
  }();
  return Answer(loaded, why_not);
}

const NcclApi* Nccl(std::string* why_not) {
  static const Loaded<NcclApi> loaded = [] {
    Loaded<NcclApi> l;
    l.ok = LoadNcclApi(DefaultNcclLibraries(), &l.api, &l.why_not);
    return l;
  }();
  return Answer(loaded, why_not);
}

std::string CudaErrorText(const DriverApi& api, CUresult result) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.cuGetErrorName != nullptr && api.cuGetErrorName(result, &name) != CUDA_SUCCESS) {
    name = nullptr;
  }
  if (api.cuGetErrorString != nullptr && api.cuGetErrorString(result, &text) != CUDA_SUCCESS) {
    text = nullptr;
  }
  if (name == nullptr) return fmt::format("CUDA error {}", result);
  if (text == nullptr) return name;
  return fmt::format("{} ({})", name, text);
}

std::string CublasStatusText(const CublasLtApi& api, cublasStatus_t status) {
  if (api.cublasLtGetStatusString != nullptr) {
    const char* text = api.cublasLtGetStatusString(status);
    if (text != nullptr && *text != '\0') return text;
  }
  return fmt::format("cuBLAS status {}", status);
}

std::string NvmlErrorText(const NvmlApi& api, nvmlReturn_t result) {
  const char* text = api.nvmlErrorString != nullptr ? api.nvmlErrorString(result) : nullptr;
  if (text == nullptr || *text == '\0') return fmt::format("NVML error {}", result);
  return fmt::format("{} (NVML error {})", text, result);
}

std::string NcclErrorText(const NcclApi& api, ncclResult_t result) {
  const char* text = api.ncclGetErrorString != nullptr ? api.ncclGetErrorString(result) : nullptr;
  if (text == nullptr || *text == '\0') return fmt::format("NCCL error {}", result);
  return fmt::format("{} (NCCL error {})", text, result);
}

std::string CudaVersionText(int version) {
  if (version <= 0) return "";
  return fmt::format("{}.{}", version / 1000, version % 1000 / 10);
}

std::string NcclVersionText(int version) {
  if (version <= 0) return "";
  // NCCL_VERSION(X, Y, Z): X*1000 + Y*100 + Z up to 2.8, X*10000 + Y*100 + Z from 2.9 on.
  if (version < 10000) {
    return fmt::format("{}.{}.{}", version / 1000, version % 1000 / 100, version % 100);
  }
  return fmt::format("{}.{}.{}", version / 10000, version % 10000 / 100, version % 100);
}

std::string CublasVersionText(size_t version) {
  if (version == 0) return "";
  // CUBLAS_VERSION = major*10000 + minor*100 + patch (cublas_api.h).
  return fmt::format("{}.{}.{}", version / 10000, version % 10000 / 100, version % 100);
}

}  // namespace cloudfit::cuda

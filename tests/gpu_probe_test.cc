// The GPU probe and sampler. Without a GPU (CI, most laptops) the tests check that every missing
// piece is named, bind the loaders to whatever CUDA libraries this machine has (the toolkit's
// driver stub, cuBLASLt, NCCL), which checks every symbol name, and run the whole probe against
// fake libraries, which checks the measuring logic. With a GPU they also measure it and check
// that the figures are in a sane range.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "cloudfit/accelerator.h"
#include "cloudfit/gpu_probe.h"
#include "cloudfit/gpu_sampler.h"
#include "measure/cuda_api.h"
#include "test_support.h"
#include "util/strings.h"

namespace cloudfit {
namespace {

// Whether this machine has a driver that starts and sees a GPU; `why` says what is missing.
bool HaveGpu(std::string* why) {
  const cuda::DriverApi* api = cuda::Driver(why);
  if (api == nullptr) return false;
  cuda::CUresult r = api->cuInit(0);
  if (r != cuda::CUDA_SUCCESS) {
    *why = "cuInit: " + cuda::CudaErrorText(*api, r);
    return false;
  }
  int count = 0;
  if (api->cuDeviceGetCount(&count) != cuda::CUDA_SUCCESS || count == 0) {
    *why = "no GPU";
    return false;
  }
  return true;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The CUDA toolkit's directory, where the driver stub and the libraries may lie.
std::string CudaHome() {
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    const char* value = std::getenv(var);
    if (value != nullptr && *value != '\0') return value;
  }
  return "/usr/local/cuda";
}

// ---- Loading ----

TEST(GpuCudaApiTest, MissingLibraryIsNamed) {
  std::string why;
  cuda::DriverApi driver;
  EXPECT_FALSE(cuda::LoadDriverApi({"libdoes-not-exist.so"}, &driver, &why));
  EXPECT_TRUE(Contains(why, "libdoes-not-exist.so")) << why;

  cuda::CublasLtApi lt;
  why.clear();
  EXPECT_FALSE(cuda::LoadCublasLtApi({"libdoes-not-exist.so.13", "libnor-this.so"}, &lt, &why));
  EXPECT_TRUE(Contains(why, "libdoes-not-exist.so.13")) << why;
  EXPECT_TRUE(Contains(why, "libnor-this.so")) << why;

  cuda::NvmlApi nvml;
  why.clear();
  EXPECT_FALSE(cuda::LoadNvmlApi({"libdoes-not-exist.so"}, &nvml, &why));
  EXPECT_TRUE(Contains(why, "libdoes-not-exist.so")) << why;

  cuda::NcclApi nccl;
  why.clear();
  EXPECT_FALSE(cuda::LoadNcclApi({"libdoes-not-exist.so"}, &nccl, &why));
  EXPECT_TRUE(Contains(why, "libdoes-not-exist.so")) << why;

  why.clear();
  EXPECT_FALSE(cuda::LoadNcclApi({}, &nccl, &why));
  EXPECT_FALSE(why.empty());
}

TEST(GpuCudaApiTest, MissingSymbolIsNamed) {
  // The C maths library opens everywhere and has none of the CUDA functions.
  std::string why;
  cuda::DriverApi driver;
  ASSERT_FALSE(cuda::LoadDriverApi({"libm.so.6"}, &driver, &why));
  EXPECT_TRUE(Contains(why, "libm.so.6")) << why;
  EXPECT_TRUE(Contains(why, "cuInit")) << why;
  EXPECT_TRUE(Contains(why, "cuMemAlloc_v2")) << why;
  EXPECT_TRUE(Contains(why, "cuEventElapsedTime_v2")) << why;

  cuda::NvmlApi nvml;
  why.clear();
  ASSERT_FALSE(cuda::LoadNvmlApi({"libm.so.6"}, &nvml, &why));
  EXPECT_TRUE(Contains(why, "nvmlInit_v2")) << why;
}

TEST(GpuCudaApiTest, DefaultNames) {
  EXPECT_EQ(cuda::DefaultDriverLibraries(), std::vector<std::string>{"libcuda.so.1"});
  EXPECT_EQ(cuda::DefaultNvmlLibraries(), std::vector<std::string>{"libnvidia-ml.so.1"});
  EXPECT_EQ(cuda::DefaultNcclLibraries(), std::vector<std::string>{"libnccl.so.2"});
  std::vector<std::string> any = cuda::DefaultCublasLtLibraries();
  ASSERT_FALSE(any.empty());
  EXPECT_EQ(any.front(), "libcublasLt.so.13");
  EXPECT_EQ(any.back(), "libcublasLt.so");
  // A 12.4 driver cannot run cuBLASLt 13, so it is not tried.
  std::vector<std::string> cuda12 = cuda::DefaultCublasLtLibraries(12040);
  EXPECT_EQ(std::count(cuda12.begin(), cuda12.end(), "libcublasLt.so.13"), 0);
  EXPECT_EQ(cuda12.front(), "libcublasLt.so.12");
}

TEST(GpuCudaApiTest, VersionText) {
  EXPECT_EQ(cuda::CudaVersionText(12040), "12.4");
  EXPECT_EQ(cuda::CudaVersionText(11080), "11.8");
  EXPECT_EQ(cuda::CudaVersionText(13000), "13.0");
  EXPECT_EQ(cuda::CudaVersionText(0), "");
  EXPECT_EQ(cuda::NcclVersionText(22809), "2.28.9");
  EXPECT_EQ(cuda::NcclVersionText(2804), "2.8.4");
  EXPECT_EQ(cuda::CublasVersionText(120405), "12.4.5");
  EXPECT_EQ(cuda::CublasVersionText(130100), "13.1.0");
}

// The toolkit ships a link stub of libcuda that exports every driver function and fails each
// call with CUDA_ERROR_STUB_LIBRARY: binding it checks every symbol name in DriverApi.
TEST(GpuCudaApiTest, BindsTheToolkitDriverStub) {
  // The stub's soname is libcuda.so.1: once it is loaded, dlopen("libcuda.so.1") would return
  // it. Settle the process's real driver first (Driver() keeps its first answer), so that the
  // tests after this one see the machine as it is.
  std::string real_why;
  cuda::Driver(&real_why);
  std::string stub = CudaHome() + "/lib64/stubs/libcuda.so";
  if (!std::filesystem::exists(stub)) GTEST_SKIP() << "no CUDA toolkit stub at " << stub;
  cuda::DriverApi api;
  std::string why;
  ASSERT_TRUE(cuda::LoadDriverApi({stub}, &api, &why)) << why;
  EXPECT_EQ(api.library, stub);
  int version = 0;
  cuda::CUresult r = api.cuDriverGetVersion(&version);
  EXPECT_NE(r, cuda::CUDA_SUCCESS);  // a stub has no driver behind it
  EXPECT_FALSE(cuda::CudaErrorText(api, r).empty());
}

// The same cuBLASLt the probe would use (the one that suits the driver, where there is one).
TEST(GpuCudaApiTest, BindsCublasLtWhereInstalled) {
  std::string why;
  int driver_version = 0;
  const cuda::DriverApi* driver = cuda::Driver(&why);
  if (driver != nullptr) driver->cuDriverGetVersion(&driver_version);
  const cuda::CublasLtApi* api = cuda::CublasLt(driver_version, &why);
  if (api == nullptr) GTEST_SKIP() << why;
  size_t version = api->cublasLtGetVersion();
  EXPECT_GE(version, 110000u);
  EXPECT_FALSE(cuda::CublasVersionText(version).empty());
  EXPECT_FALSE(cuda::CublasStatusText(*api, cuda::CUBLAS_STATUS_NOT_SUPPORTED).empty());
}

TEST(GpuCudaApiTest, BindsNcclWhereInstalled) {
  std::string why;
  const cuda::NcclApi* nccl = cuda::Nccl(&why);
  if (nccl == nullptr) GTEST_SKIP() << why;
  const cuda::NcclApi& api = *nccl;
  int version = 0;
  ASSERT_EQ(api.ncclGetVersion(&version), cuda::ncclSuccess);
  EXPECT_GE(version, 2000);
  EXPECT_EQ(cuda::NcclVersionText(version).substr(0, 2), "2.");
  EXPECT_FALSE(cuda::NcclErrorText(api, 5).empty());
}

// ---- Without a GPU ----

TEST(GpuProbeTest, SaysWhyWithoutGpu) {
  std::string why;
  if (HaveGpu(&why)) GTEST_SKIP() << "this machine has a GPU";
  int progress_calls = 0;
  GpuProbeOptions options;
  options.quick = true;
  options.progress = [&](const std::string&) { ++progress_calls; };
  GpuSystemProbe probe = ProbeGpus(options);
  EXPECT_FALSE(probe.available);
  EXPECT_TRUE(probe.devices.empty());
  EXPECT_TRUE(probe.peers.empty());
  EXPECT_FALSE(probe.allreduce_bus_bytes_per_s.has_value());
  EXPECT_EQ(progress_calls, 0);
  ASSERT_FALSE(probe.unavailable_reason.empty());
  std::cout << "reason: " << probe.unavailable_reason << "\n";
  std::string driver_why;
  if (cuda::Driver(&driver_why) == nullptr) {
    // No driver at all: the reason names the library that was looked for.
    EXPECT_TRUE(Contains(probe.unavailable_reason, "libcuda.so.1")) << probe.unavailable_reason;
  } else {
    EXPECT_TRUE(Contains(probe.unavailable_reason, "cuInit") ||
                Contains(probe.unavailable_reason, "no GPU"))
        << probe.unavailable_reason;
  }
}

TEST(GpuSamplerTest, SaysWhyWithoutGpu) {
  std::string why;
  if (HaveGpu(&why)) GTEST_SKIP() << "this machine has a GPU";
  std::string why_not;
  std::unique_ptr<GpuSampler> sampler = OpenGpuSampler(&why_not);
  EXPECT_EQ(sampler, nullptr);
  EXPECT_FALSE(why_not.empty());
  std::string nvml_why;
  if (cuda::Nvml(&nvml_why) == nullptr) {
    EXPECT_TRUE(Contains(why_not, "libnvidia-ml.so.1")) << why_not;
  }
  // A null out-parameter is allowed.
  EXPECT_EQ(OpenGpuSampler(nullptr), nullptr);
}

// ---- With a GPU ----

// Twice the highest datasheet peak in the catalog for `precision`: no measurement may beat it.
double Ceiling(Precision precision) {
  double most = 0;
  for (const Accelerator& a : testing::BuiltInCatalog().accelerators()) {
    if (a.peak(precision)) most = std::max(most, *a.peak(precision));
  }
  return 2 * most;
}

double MemoryCeiling() {
  double most = 0;
  for (const Accelerator& a : testing::BuiltInCatalog().accelerators()) {
    most = std::max(most, a.memory_bandwidth_bytes_per_s);
  }
  return 2 * most;
}

// The bounds the GPU test below holds measurements to, checked where there is no GPU too.
TEST(GpuProbeTest, CeilingsComeFromTheCatalog) {
  for (Precision p : {Precision::kFp32, Precision::kTf32, Precision::kFp16, Precision::kBf16,
                      Precision::kFp8}) {
    EXPECT_GT(Ceiling(p), 1e13) << PrecisionName(p);
    EXPECT_LT(Ceiling(p), 1e17) << PrecisionName(p);
  }
  EXPECT_GT(MemoryCeiling(), 1e12);
}

TEST(GpuProbeTest, MeasuresTheGpus) {
  std::string why;
  if (!HaveGpu(&why)) GTEST_SKIP() << "no GPU: " << why;
  std::vector<std::string> steps;
  GpuProbeOptions options;
  options.quick = true;
  options.progress = [&](const std::string& line) { steps.push_back(line); };
  GpuSystemProbe probe = ProbeGpus(options);
  ASSERT_TRUE(probe.available) << probe.unavailable_reason;
  ASSERT_FALSE(probe.devices.empty());
  EXPECT_FALSE(steps.empty());
  EXPECT_FALSE(probe.cuda_driver_version.empty());
  for (const std::string& note : probe.notes) std::cout << "note: " << note << "\n";

  for (const GpuDeviceProbe& d : probe.devices) {
    SCOPED_TRACE(d.name);
    for (const std::string& note : d.notes) std::cout << "GPU " << d.index << ": " << note << "\n";
    EXPECT_FALSE(d.name.empty());
    EXPECT_EQ(d.uuid.rfind("GPU-", 0), 0u) << d.uuid;
    EXPECT_FALSE(d.compute_capability.empty());
    EXPECT_GT(d.memory_bytes, 1e9);
    EXPECT_GT(d.sm_count, 0);
    EXPECT_GT(d.device_copy_bytes_per_s, 0);
    EXPECT_LT(d.device_copy_bytes_per_s, MemoryCeiling());
    EXPECT_GT(d.host_to_device_bytes_per_s, 0);
    EXPECT_LT(d.host_to_device_bytes_per_s, 1e12);  // above any PCIe or NVLink-C2C link
    EXPECT_GT(d.device_to_host_bytes_per_s, 0);
    EXPECT_LT(d.device_to_host_bytes_per_s, 1e12);
    if (probe.cublas_version.empty()) continue;
    ASSERT_EQ(d.gemm.size(), 5u);
    for (const GpuGemmResult& g : d.gemm) {
      SCOPED_TRACE(g.precision);
      std::cout << "GPU " << d.index << " " << g.precision << ": " << g.flops_per_s / 1e12
                << " TFLOPS at " << g.size << " " << g.note << "\n";
      Precision p;
      ASSERT_TRUE(ParsePrecision(g.precision, &p));
      if (!g.supported) {
        EXPECT_FALSE(g.note.empty());
        continue;
      }
      EXPECT_GT(g.flops_per_s, 0);
      EXPECT_LT(g.flops_per_s, Ceiling(p));
      EXPECT_GT(g.size, 0);
    }
    // Every GPU cuBLASLt runs on has FP32 and FP16 GEMMs.
    EXPECT_TRUE(d.gemm[0].supported) << d.gemm[0].note;
    EXPECT_TRUE(d.gemm[2].supported) << d.gemm[2].note;
  }

  size_t n = probe.devices.size();
  EXPECT_EQ(probe.peers.size(), n * (n - 1));
  for (const GpuPeerResult& peer : probe.peers) {
    EXPECT_NE(peer.from, peer.to);
    EXPECT_GE(peer.bytes_per_s, 0);
    EXPECT_LT(peer.bytes_per_s, MemoryCeiling());
  }
  if (n >= 2 && !probe.nccl_version.empty() && probe.allreduce_bus_bytes_per_s) {
    EXPECT_GT(*probe.allreduce_bus_bytes_per_s, 0);
    EXPECT_LT(*probe.allreduce_bus_bytes_per_s, MemoryCeiling());
    EXPECT_GT(probe.allreduce_message_bytes, 0);
  }
}

TEST(GpuSamplerTest, SamplesEveryGpu) {
  std::string why;
  if (!HaveGpu(&why)) GTEST_SKIP() << "no GPU: " << why;
  std::string why_not;
  std::unique_ptr<GpuSampler> sampler = OpenGpuSampler(&why_not);
  if (sampler == nullptr) GTEST_SKIP() << "a GPU but no NVML: " << why_not;
  ASSERT_GT(sampler->device_count(), 0);
  std::vector<GpuSample> samples = sampler->Sample();
  ASSERT_EQ(static_cast<int>(samples.size()), sampler->device_count());
  for (const GpuSample& s : samples) {
    EXPECT_FALSE(s.name.empty());
    EXPECT_GE(s.utilization_percent, 0);
    EXPECT_LE(s.utilization_percent, 100);
    EXPECT_GT(s.memory_total_bytes, 1e9);
    EXPECT_LE(s.memory_used_bytes, s.memory_total_bytes);
    EXPECT_GE(s.power_watts, 0);
    EXPECT_LT(s.power_watts, 5000);
  }
}

// ---- The whole probe against fake libraries ----
//
// Without a GPU the measuring code would go untested, so these tables of fakes stand in for
// libcuda, cuBLASLt, NCCL and NVML. The fakes keep a virtual GPU clock that each copy or GEMM
// advances by its size over a fixed rate, so the probe must report those rates back; they
// count every object made and freed, so the probe must free all it made; and they check the
// rules the real libraries enforce (a stream used only in its own context, attribute sizes,
// FP8's transposed A), recording each breach.

namespace fake {

constexpr size_t kGiB = size_t{1} << 30;
constexpr size_t kMiB = size_t{1} << 20;

struct Matmul {
  int compute = 0;
  int scale = 0;
  int32_t trans_a = 0;
  int32_t trans_b = 0;
  int8_t fast_accum = 0;
};
struct Layout {
  int type = 0;
  uint64_t rows = 0;
  uint64_t cols = 0;
  int64_t ld = 0;
};
struct Preference {
  uint64_t workspace = 0;
};

struct State {
  // The machine.
  int init_result = 0;
  int count = 2;
  int cc_major = 9;
  int cc_minor = 0;
  size_t total = 80 * kGiB;
  size_t alloc_limit = 80 * kGiB;  // cuMemAlloc fails above this size
  // Rates the fakes run at: bytes/s (device copies count bytes read + written), FLOP/s.
  double device_copy = 2e12;
  double host_to_device = 25e9;
  double device_to_host = 20e9;
  double peer = 100e9;
  double gemm_fp32 = 60e12;
  double gemm_tf32 = 400e12;
  double gemm_half = 800e12;  // FP16 and BF16
  double gemm_fp8 = 1600e12;

  // What the probe did.
  double clock = 0;  // virtual GPU seconds
  int current = -1;  // device of the current context, -1 for none
  int retained[8] = {};
  std::map<cuda::CUdeviceptr, size_t> allocations;
  cuda::CUdeviceptr next_address = 0x100000000;
  std::set<uintptr_t> host_allocations;
  std::map<uintptr_t, int> streams;                    // stream -> device
  std::map<uintptr_t, std::pair<int, double>> events;  // event -> device, recorded time
  uintptr_t next_handle = 0x1000;
  std::set<std::pair<int, int>> peer_access;
  int handles = 0;
  std::set<Matmul*> descs;
  std::set<Layout*> layouts;
  std::set<Preference*> preferences;
  std::vector<Matmul> fp8_descs;  // as each FP8 GEMM ran
  int comms = 0;
  int group_depth = 0;
  int allreduces = 0;
  size_t allreduce_count = 0;
  int nvml_inits = 0;
  std::vector<std::string> breaches;
};

State* g = nullptr;  // the state of the fakes of the running test

char contexts[8];  // a context's address stands for its device
cuda::CUcontext ContextOf(int device) {
  return reinterpret_cast<cuda::CUcontext>(&contexts[device]);
}
int DeviceOf(cuda::CUcontext ctx) {
  return ctx == nullptr ? -1 : static_cast<int>(reinterpret_cast<char*>(ctx) - contexts);
}
uintptr_t NewHandle() { return g->next_handle += 16; }
void Breach(const std::string& what) { g->breaches.push_back(what); }

// Work enqueued on `stream` must come from its context.
bool StreamOk(cuda::CUstream stream, const char* call) {
  auto it = g->streams.find(reinterpret_cast<uintptr_t>(stream));
  if (it == g->streams.end()) {
    Breach(std::string(call) + ": unknown stream");
    return false;
  }
  if (it->second != g->current) {
    Breach(std::string(call) + ": stream of another context");
    return false;
  }
  return true;
}

// ---- libcuda ----

cuda::CUresult GetErrorName(cuda::CUresult e, const char** s) {
  switch (e) {
    case 2:
      *s = "CUDA_ERROR_OUT_OF_MEMORY";
      return 0;
    case 34:
      *s = "CUDA_ERROR_STUB_LIBRARY";
      return 0;
    case 100:
      *s = "CUDA_ERROR_NO_DEVICE";
      return 0;
    default:
      return 1;
  }
}
cuda::CUresult GetErrorString(cuda::CUresult e, const char** s) {
  if (e == 2) {
    *s = "out of memory";
    return 0;
  }
  return 1;
}
cuda::CUresult Init(unsigned int) { return g->init_result; }
cuda::CUresult DriverGetVersion(int* v) {
  *v = 12040;
  return 0;
}
cuda::CUresult DeviceGetCount(int* n) {
  *n = g->count;
  return 0;
}
cuda::CUresult DeviceGet(cuda::CUdevice* d, int ordinal) {
  if (ordinal < 0 || ordinal >= g->count) return 101;
  *d = ordinal;
  return 0;
}
cuda::CUresult DeviceGetName(char* name, int len, cuda::CUdevice d) {
  std::snprintf(name, static_cast<size_t>(len), "Fake GPU %d", d);
  return 0;
}
cuda::CUresult DeviceGetUuid(cuda::CUuuid* uuid, cuda::CUdevice d) {
  for (int i = 0; i < 16; ++i) uuid->bytes[i] = static_cast<char>(i + 16 * d);
  return 0;
}
cuda::CUresult DeviceTotalMem(size_t* bytes, cuda::CUdevice) {
  *bytes = g->total;
  return 0;
}
cuda::CUresult DeviceGetAttribute(int* value, int attribute, cuda::CUdevice) {
  if (attribute == cuda::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) {
    *value = g->cc_major;
  } else if (attribute == cuda::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR) {
    *value = g->cc_minor;
  } else if (attribute == cuda::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT) {
    *value = 132;
  } else {
    return 1;
  }
  return 0;
}
cuda::CUresult DeviceCanAccessPeer(int* can, cuda::CUdevice, cuda::CUdevice) {
  *can = 1;
  return 0;
}
cuda::CUresult PrimaryCtxRetain(cuda::CUcontext* ctx, cuda::CUdevice d) {
  ++g->retained[d];
  *ctx = ContextOf(d);
  return 0;
}
cuda::CUresult PrimaryCtxRelease(cuda::CUdevice d) {
  if (--g->retained[d] < 0) Breach("primary context released more often than retained");
  return 0;
}
cuda::CUresult CtxSetCurrent(cuda::CUcontext ctx) {
  g->current = DeviceOf(ctx);
  return 0;
}
cuda::CUresult CtxSynchronize() { return g->current < 0 ? 201 : 0; }
cuda::CUresult CtxEnablePeerAccess(cuda::CUcontext peer, unsigned int flags) {
  if (flags != 0) Breach("cuCtxEnablePeerAccess: flags must be 0");
  if (!g->peer_access.insert({g->current, DeviceOf(peer)}).second) return 704;
  return 0;
}
cuda::CUresult MemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  size_t used = 0;
  for (const auto& [address, bytes] : g->allocations) used += bytes;
  *free_bytes = g->total - used;
  *total_bytes = g->total;
  return 0;
}
cuda::CUresult MemAlloc(cuda::CUdeviceptr* p, size_t bytes) {
  if (g->current < 0) return 201;
  if (bytes > g->alloc_limit) return 2;
  *p = g->next_address;
  g->next_address += (bytes + 0xFFFF) / 0x10000 * 0x10000 + 0x10000;
  g->allocations[*p] = bytes;
  return 0;
}
cuda::CUresult MemFree(cuda::CUdeviceptr p) {
  if (g->allocations.erase(p) != 1) Breach("cuMemFree of an unknown pointer");
  return 0;
}
cuda::CUresult MemHostAlloc(void** p, size_t, unsigned int flags) {
  if (flags != cuda::CU_MEMHOSTALLOC_PORTABLE) Breach("cuMemHostAlloc: unexpected flags");
  uintptr_t h = NewHandle();
  g->host_allocations.insert(h);
  *p = reinterpret_cast<void*>(h);
  return 0;
}
cuda::CUresult MemFreeHost(void* p) {
  if (g->host_allocations.erase(reinterpret_cast<uintptr_t>(p)) != 1) {
    Breach("cuMemFreeHost of an unknown pointer");
  }
  return 0;
}
cuda::CUresult MemsetD8(cuda::CUdeviceptr p, unsigned char, size_t n) {
  auto it = g->allocations.find(p);
  if (it == g->allocations.end() || n > it->second) Breach("cuMemsetD8 outside an allocation");
  return 0;
}
cuda::CUresult HtoD(cuda::CUdeviceptr, const void*, size_t n, cuda::CUstream s) {
  if (!StreamOk(s, "cuMemcpyHtoDAsync")) return 400;
  g->clock += static_cast<double>(n) / g->host_to_device;
  return 0;
}
cuda::CUresult DtoH(void*, cuda::CUdeviceptr, size_t n, cuda::CUstream s) {
  if (!StreamOk(s, "cuMemcpyDtoHAsync")) return 400;
  g->clock += static_cast<double>(n) / g->device_to_host;
  return 0;
}
cuda::CUresult DtoD(cuda::CUdeviceptr, cuda::CUdeviceptr, size_t n, cuda::CUstream s) {
  if (!StreamOk(s, "cuMemcpyDtoDAsync")) return 400;
  g->clock += 2.0 * static_cast<double>(n) / g->device_copy;
  return 0;
}
cuda::CUresult Peer(cuda::CUdeviceptr, cuda::CUcontext to, cuda::CUdeviceptr, cuda::CUcontext from,
                    size_t n, cuda::CUstream s) {
  if (!StreamOk(s, "cuMemcpyPeerAsync")) return 400;
  if (DeviceOf(from) != g->current || DeviceOf(to) == DeviceOf(from)) {
    Breach("cuMemcpyPeerAsync: unexpected contexts");
  }
  g->clock += static_cast<double>(n) / g->peer;
  return 0;
}
cuda::CUresult StreamCreate(cuda::CUstream* s, unsigned int flags) {
  if (flags != cuda::CU_STREAM_NON_BLOCKING) Breach("cuStreamCreate: unexpected flags");
  uintptr_t h = NewHandle();
  g->streams[h] = g->current;
  *s = reinterpret_cast<cuda::CUstream>(h);
  return 0;
}
cuda::CUresult StreamSynchronize(cuda::CUstream s) {
  return g->streams.count(reinterpret_cast<uintptr_t>(s)) == 1 ? 0 : 400;
}
cuda::CUresult StreamDestroy(cuda::CUstream s) {
  if (g->streams.erase(reinterpret_cast<uintptr_t>(s)) != 1) Breach("unknown stream destroyed");
  return 0;
}
cuda::CUresult EventCreate(cuda::CUevent* e, unsigned int) {
  uintptr_t h = NewHandle();
  g->events[h] = {g->current, -1};
  *e = reinterpret_cast<cuda::CUevent>(h);
  return 0;
}
cuda::CUresult EventRecord(cuda::CUevent e, cuda::CUstream s) {
  auto it = g->events.find(reinterpret_cast<uintptr_t>(e));
  if (it == g->events.end() || !StreamOk(s, "cuEventRecord")) return 400;
  if (it->second.first != g->current) Breach("cuEventRecord: event of another context");
  it->second.second = g->clock;
  return 0;
}
cuda::CUresult EventSynchronize(cuda::CUevent e) {
  return g->events.count(reinterpret_cast<uintptr_t>(e)) == 1 ? 0 : 400;
}
cuda::CUresult EventElapsedTime(float* ms, cuda::CUevent a, cuda::CUevent b) {
  auto x = g->events.find(reinterpret_cast<uintptr_t>(a));
  auto y = g->events.find(reinterpret_cast<uintptr_t>(b));
  if (x == g->events.end() || y == g->events.end() || x->second.second < 0 ||
      y->second.second < 0) {
    return 400;
  }
  *ms = static_cast<float>((y->second.second - x->second.second) * 1000);
  return 0;
}
cuda::CUresult EventDestroy(cuda::CUevent e) {
  if (g->events.erase(reinterpret_cast<uintptr_t>(e)) != 1) Breach("unknown event destroyed");
  return 0;
}

cuda::DriverApi Driver() {
  cuda::DriverApi api;
  api.library = "fake libcuda";
  api.cuGetErrorName = GetErrorName;
  api.cuGetErrorString = GetErrorString;
  api.cuInit = Init;
  api.cuDriverGetVersion = DriverGetVersion;
  api.cuDeviceGetCount = DeviceGetCount;
  api.cuDeviceGet = DeviceGet;
  api.cuDeviceGetName = DeviceGetName;
  api.cuDeviceGetUuid = DeviceGetUuid;
  api.cuDeviceTotalMem = DeviceTotalMem;
  api.cuDeviceGetAttribute = DeviceGetAttribute;
  api.cuDeviceCanAccessPeer = DeviceCanAccessPeer;
  api.cuDevicePrimaryCtxRetain = PrimaryCtxRetain;
  api.cuDevicePrimaryCtxRelease = PrimaryCtxRelease;
  api.cuCtxSetCurrent = CtxSetCurrent;
  api.cuCtxSynchronize = CtxSynchronize;
  api.cuCtxEnablePeerAccess = CtxEnablePeerAccess;
  api.cuMemGetInfo = MemGetInfo;
  api.cuMemAlloc = MemAlloc;
  api.cuMemFree = MemFree;
  api.cuMemHostAlloc = MemHostAlloc;
  api.cuMemFreeHost = MemFreeHost;
  api.cuMemsetD8 = MemsetD8;
  api.cuMemcpyHtoDAsync = HtoD;
  api.cuMemcpyDtoHAsync = DtoH;
  api.cuMemcpyDtoDAsync = DtoD;
  api.cuMemcpyPeerAsync = Peer;
  api.cuStreamCreate = StreamCreate;
  api.cuStreamSynchronize = StreamSynchronize;
  api.cuStreamDestroy = StreamDestroy;
  api.cuEventCreate = EventCreate;
  api.cuEventRecord = EventRecord;
  api.cuEventSynchronize = EventSynchronize;
  api.cuEventElapsedTime = EventElapsedTime;
  api.cuEventDestroy = EventDestroy;
  return api;
}

// ---- cuBLASLt ----

cuda::cublasStatus_t LtCreate(cuda::cublasLtHandle_t* h) {
  ++g->handles;
  *h = reinterpret_cast<cuda::cublasLtHandle_t>(NewHandle());
  return 0;
}
cuda::cublasStatus_t LtDestroy(cuda::cublasLtHandle_t) {
  --g->handles;
  return 0;
}
size_t LtGetVersion() { return 120405; }
const char* LtStatusString(cuda::cublasStatus_t) { return "CUBLAS_STATUS_NOT_SUPPORTED"; }
cuda::cublasStatus_t DescCreate(cuda::cublasLtMatmulDesc_t* d, int compute, int scale) {
  Matmul* m = new Matmul{compute, scale};
  g->descs.insert(m);
  *d = reinterpret_cast<cuda::cublasLtMatmulDesc_t>(m);
  return 0;
}
cuda::cublasStatus_t DescDestroy(cuda::cublasLtMatmulDesc_t d) {
  Matmul* m = reinterpret_cast<Matmul*>(d);
  if (g->descs.erase(m) != 1) Breach("unknown matmul descriptor destroyed");
  delete m;
  return 0;
}
cuda::cublasStatus_t DescSet(cuda::cublasLtMatmulDesc_t d, int attr, const void* buf, size_t size) {
  Matmul* m = reinterpret_cast<Matmul*>(d);
  // The real library checks each attribute's size: int32_t for TRANSA/B, int8_t FAST_ACCUM.
  if (attr == cuda::CUBLASLT_MATMUL_DESC_TRANSA && size == sizeof(int32_t)) {
    std::memcpy(&m->trans_a, buf, size);
  } else if (attr == cuda::CUBLASLT_MATMUL_DESC_TRANSB && size == sizeof(int32_t)) {
    std::memcpy(&m->trans_b, buf, size);
  } else if (attr == cuda::CUBLASLT_MATMUL_DESC_FAST_ACCUM && size == sizeof(int8_t)) {
    std::memcpy(&m->fast_accum, buf, size);
  } else {
    Breach("matmul attribute " + std::to_string(attr) + " of size " + std::to_string(size));
    return 7;
  }
  return 0;
}
cuda::cublasStatus_t LayoutCreate(cuda::cublasLtMatrixLayout_t* l, int type, uint64_t rows,
                                  uint64_t cols, int64_t ld) {
  Layout* x = new Layout{type, rows, cols, ld};
  g->layouts.insert(x);
  *l = reinterpret_cast<cuda::cublasLtMatrixLayout_t>(x);
  return 0;
}
cuda::cublasStatus_t LayoutDestroy(cuda::cublasLtMatrixLayout_t l) {
  Layout* x = reinterpret_cast<Layout*>(l);
  if (g->layouts.erase(x) != 1) Breach("unknown layout destroyed");
  delete x;
  return 0;
}
cuda::cublasStatus_t PrefCreate(cuda::cublasLtMatmulPreference_t* p) {
  Preference* x = new Preference;
  g->preferences.insert(x);
  *p = reinterpret_cast<cuda::cublasLtMatmulPreference_t>(x);
  return 0;
}
cuda::cublasStatus_t PrefSet(cuda::cublasLtMatmulPreference_t p, int attr, const void* buf,
                             size_t size) {
  if (attr != cuda::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES || size != sizeof(uint64_t)) {
    Breach("preference attribute " + std::to_string(attr));
    return 7;
  }
  std::memcpy(&reinterpret_cast<Preference*>(p)->workspace, buf, size);
  return 0;
}
cuda::cublasStatus_t PrefDestroy(cuda::cublasLtMatmulPreference_t p) {
  Preference* x = reinterpret_cast<Preference*>(p);
  if (g->preferences.erase(x) != 1) Breach("unknown preference destroyed");
  delete x;
  return 0;
}

// The FLOP/s the fake runs a descriptor's GEMM at, or 0 where cuBLASLt would have no kernel:
// the combinations of cuBLASLt's table of supported types.
double GemmRate(const Matmul& m, const Layout& a, const Layout& b, const Layout& c,
                const Layout& d) {
  bool fp32_scale = m.scale == cuda::CUDA_R_32F;
  bool same = a.type == b.type && c.type == d.type;
  if (!fp32_scale || !same) return 0;
  if (a.type == cuda::CUDA_R_32F && c.type == cuda::CUDA_R_32F) {
    if (m.compute == cuda::CUBLAS_COMPUTE_32F) return g->gemm_fp32;
    if (m.compute == cuda::CUBLAS_COMPUTE_32F_FAST_TF32) return g->gemm_tf32;
  }
  if (m.compute != cuda::CUBLAS_COMPUTE_32F) return 0;
  if ((a.type == cuda::CUDA_R_16F || a.type == cuda::CUDA_R_16BF) && c.type == a.type) {
    return g->gemm_half;
  }
  if (a.type == cuda::CUDA_R_8F_E4M3 && c.type == cuda::CUDA_R_16BF &&
      10 * g->cc_major + g->cc_minor >= 89 && m.trans_a == cuda::CUBLAS_OP_T &&
      m.trans_b == cuda::CUBLAS_OP_N) {
    return g->gemm_fp8;
  }
  return 0;
}

cuda::cublasStatus_t Heuristic(cuda::cublasLtHandle_t, cuda::cublasLtMatmulDesc_t desc,
                               cuda::cublasLtMatrixLayout_t a, cuda::cublasLtMatrixLayout_t b,
                               cuda::cublasLtMatrixLayout_t c, cuda::cublasLtMatrixLayout_t d,
                               cuda::cublasLtMatmulPreference_t pref, int requested,
                               cuda::cublasLtMatmulHeuristicResult_t* results, int* returned) {
  if (requested < 1) return 7;
  const Matmul& m = *reinterpret_cast<Matmul*>(desc);
  if (GemmRate(m, *reinterpret_cast<Layout*>(a), *reinterpret_cast<Layout*>(b),
               *reinterpret_cast<Layout*>(c), *reinterpret_cast<Layout*>(d)) <= 0) {
    *returned = 0;
    return cuda::CUBLAS_STATUS_NOT_SUPPORTED;
  }
  results[0] = {};
  results[0].algo.data[0] = 42;
  results[0].workspaceSize =
      std::min<uint64_t>(reinterpret_cast<Preference*>(pref)->workspace, 32 * kMiB);
  results[0].state = 0;
  *returned = 1;
  return 0;
}

cuda::cublasStatus_t LtMatmul(cuda::cublasLtHandle_t, cuda::cublasLtMatmulDesc_t desc,
                              const void* alpha, const void* a, cuda::cublasLtMatrixLayout_t al,
                              const void* b, cuda::cublasLtMatrixLayout_t bl, const void* beta,
                              const void* c, cuda::cublasLtMatrixLayout_t cl, void* d,
                              cuda::cublasLtMatrixLayout_t dl,
                              const cuda::cublasLtMatmulAlgo_t* algo, void* workspace,
                              size_t workspace_bytes, cuda::CUstream stream) {
  if (!StreamOk(stream, "cublasLtMatmul")) return 13;
  if (alpha == nullptr || beta == nullptr || a == nullptr || b == nullptr || c == nullptr ||
      d == nullptr || algo == nullptr || algo->data[0] != 42 ||
      (workspace_bytes > 0 && workspace == nullptr)) {
    Breach("cublasLtMatmul: bad arguments");
    return 7;
  }
  const Matmul& m = *reinterpret_cast<Matmul*>(desc);
  const Layout& x = *reinterpret_cast<Layout*>(al);
  double rate = GemmRate(m, x, *reinterpret_cast<Layout*>(bl), *reinterpret_cast<Layout*>(cl),
                         *reinterpret_cast<Layout*>(dl));
  if (rate <= 0) return cuda::CUBLAS_STATUS_NOT_SUPPORTED;
  if (x.type == cuda::CUDA_R_8F_E4M3) g->fp8_descs.push_back(m);
  double n = static_cast<double>(x.rows);
  g->clock += 2 * n * n * n / rate;
  return 0;
}

cuda::CublasLtApi CublasLt() {
  cuda::CublasLtApi api;
  api.library = "fake libcublasLt";
  api.cublasLtCreate = LtCreate;
  api.cublasLtDestroy = LtDestroy;
  api.cublasLtGetVersion = LtGetVersion;
  api.cublasLtGetStatusString = LtStatusString;
  api.cublasLtMatmulDescCreate = DescCreate;
  api.cublasLtMatmulDescDestroy = DescDestroy;
  api.cublasLtMatmulDescSetAttribute = DescSet;
  api.cublasLtMatrixLayoutCreate = LayoutCreate;
  api.cublasLtMatrixLayoutDestroy = LayoutDestroy;
  api.cublasLtMatmulPreferenceCreate = PrefCreate;
  api.cublasLtMatmulPreferenceSetAttribute = PrefSet;
  api.cublasLtMatmulPreferenceDestroy = PrefDestroy;
  api.cublasLtMatmulAlgoGetHeuristic = Heuristic;
  api.cublasLtMatmul = LtMatmul;
  return api;
}

// ---- NCCL ----

cuda::ncclResult_t NcclVersion(int* v) {
  *v = 22005;
  return 0;
}
const char* NcclError(cuda::ncclResult_t) { return "fake NCCL error"; }
cuda::ncclResult_t CommInitAll(cuda::ncclComm_t* comms, int n, const int* devices) {
  for (int i = 0; i < n; ++i) {
    if (devices != nullptr && devices[i] != i) Breach("ncclCommInitAll: unexpected device list");
    comms[i] = reinterpret_cast<cuda::ncclComm_t>(&contexts[i]);
    ++g->comms;
  }
  return 0;
}
cuda::ncclResult_t CommDestroy(cuda::ncclComm_t) {
  --g->comms;
  return 0;
}
cuda::ncclResult_t AllReduce(const void* send, void* recv, size_t count, int type, int op,
                             cuda::ncclComm_t comm, cuda::CUstream stream) {
  if (g->group_depth != 1) Breach("ncclAllReduce outside a group");
  if (type != cuda::ncclFloat || op != cuda::ncclSum || send == nullptr || recv == nullptr) {
    Breach("ncclAllReduce: bad arguments");
  }
  int rank = static_cast<int>(reinterpret_cast<char*>(comm) - contexts);
  auto it = g->streams.find(reinterpret_cast<uintptr_t>(stream));
  if (it == g->streams.end() || it->second != rank) Breach("ncclAllReduce: stream of another GPU");
  g->allreduce_count = count;
  ++g->allreduces;
  return 0;
}
cuda::ncclResult_t GroupStart() {
  ++g->group_depth;
  return 0;
}
cuda::ncclResult_t GroupEnd() {
  --g->group_depth;
  return 0;
}

cuda::NcclApi Nccl() {
  cuda::NcclApi api;
  api.library = "fake libnccl";
  api.ncclGetVersion = NcclVersion;
  api.ncclGetErrorString = NcclError;
  api.ncclCommInitAll = CommInitAll;
  api.ncclCommDestroy = CommDestroy;
  api.ncclAllReduce = AllReduce;
  api.ncclGroupStart = GroupStart;
  api.ncclGroupEnd = GroupEnd;
  return api;
}

// ---- NVML ----

cuda::nvmlReturn_t NvmlInit() {
  ++g->nvml_inits;
  return 0;
}
cuda::nvmlReturn_t NvmlShutdown() {
  --g->nvml_inits;
  return 0;
}
const char* NvmlErrorString(cuda::nvmlReturn_t) { return "Not Supported"; }
cuda::nvmlReturn_t NvmlDriverVersion(char* v, unsigned int n) {
  std::snprintf(v, n, "550.54.15");
  return 0;
}
cuda::nvmlReturn_t NvmlCount(unsigned int* n) {
  *n = static_cast<unsigned int>(g->count);
  return 0;
}
cuda::nvmlReturn_t NvmlHandle(unsigned int i, cuda::nvmlDevice_t* d) {
  *d = reinterpret_cast<cuda::nvmlDevice_t>(&contexts[i]);
  return 0;
}
int NvmlIndex(cuda::nvmlDevice_t d) {
  return static_cast<int>(reinterpret_cast<char*>(d) - contexts);
}
cuda::nvmlReturn_t NvmlName(cuda::nvmlDevice_t d, char* name, unsigned int n) {
  std::snprintf(name, n, "Fake GPU %d", NvmlIndex(d));
  return 0;
}
cuda::nvmlReturn_t NvmlUtilization(cuda::nvmlDevice_t d, cuda::nvmlUtilization_t* u) {
  u->gpu = 40 + 10 * static_cast<unsigned int>(NvmlIndex(d));
  u->memory = 5;
  return 0;
}
cuda::nvmlReturn_t NvmlMemory(cuda::nvmlDevice_t, cuda::nvmlMemory_t* m) {
  m->total = 80ull << 30;
  m->used = 10ull << 30;
  m->free = m->total - m->used;
  return 0;
}
cuda::nvmlReturn_t NvmlPower(cuda::nvmlDevice_t d, unsigned int* mw) {
  if (NvmlIndex(d) == 1) return 3;  // NVML_ERROR_NOT_SUPPORTED
  *mw = 350500;
  return 0;
}
cuda::nvmlReturn_t NvmlClock(cuda::nvmlDevice_t, int type, unsigned int* mhz) {
  *mhz = type == cuda::NVML_CLOCK_SM ? 1980 : type == cuda::NVML_CLOCK_MEM ? 2619 : 0;
  return 0;
}

cuda::NvmlApi Nvml() {
  cuda::NvmlApi api;
  api.library = "fake libnvidia-ml";
  api.nvmlInit = NvmlInit;
  api.nvmlShutdown = NvmlShutdown;
  api.nvmlErrorString = NvmlErrorString;
  api.nvmlSystemGetDriverVersion = NvmlDriverVersion;
  api.nvmlDeviceGetCount = NvmlCount;
  api.nvmlDeviceGetHandleByIndex = NvmlHandle;
  api.nvmlDeviceGetName = NvmlName;
  api.nvmlDeviceGetUtilizationRates = NvmlUtilization;
  api.nvmlDeviceGetMemoryInfo = NvmlMemory;
  api.nvmlDeviceGetPowerUsage = NvmlPower;
  api.nvmlDeviceGetClockInfo = NvmlClock;
  return api;
}

// Installs a fresh state for one test and the tables that use it.
class Fixture {
 public:
  Fixture() : driver_(Driver()), lt_(CublasLt()), nccl_(Nccl()), nvml_(Nvml()) { g = &state; }
  ~Fixture() { g = nullptr; }

  cuda::ProbeLibraries Libraries(bool with_cublas = true, bool with_nccl = true) const {
    cuda::ProbeLibraries l;
    l.driver = &driver_;
    l.nvml = &nvml_;
    if (with_cublas) l.cublas_lt = &lt_;
    l.cublas_lt_why = "cannot load libcublasLt.so.12 (not here)";
    if (with_nccl) l.nccl = &nccl_;
    l.nccl_why = "cannot load libnccl.so.2 (not here)";
    return l;
  }
  const cuda::NvmlApi& nvml() const { return nvml_; }

  // Everything the probe made was released, and no rule was broken.
  void ExpectClean() const {
    EXPECT_TRUE(state.allocations.empty()) << state.allocations.size() << " device buffers";
    EXPECT_TRUE(state.host_allocations.empty());
    EXPECT_TRUE(state.streams.empty());
    EXPECT_TRUE(state.events.empty());
    for (int r : state.retained) EXPECT_EQ(r, 0);
    EXPECT_EQ(state.current, -1) << "a context was left current";
    EXPECT_EQ(state.handles, 0);
    EXPECT_TRUE(state.descs.empty());
    EXPECT_TRUE(state.layouts.empty());
    EXPECT_TRUE(state.preferences.empty());
    EXPECT_EQ(state.comms, 0);
    EXPECT_EQ(state.group_depth, 0);
    EXPECT_EQ(state.nvml_inits, 0);
    for (const std::string& b : state.breaches) ADD_FAILURE() << b;
  }

  State state;

 private:
  cuda::DriverApi driver_;
  cuda::CublasLtApi lt_;
  cuda::NcclApi nccl_;
  cuda::NvmlApi nvml_;
};

}  // namespace fake

const GpuGemmResult* FindGemm(const GpuDeviceProbe& d, const std::string& precision) {
  for (const GpuGemmResult& g : d.gemm) {
    if (g.precision == precision) return &g;
  }
  return nullptr;
}

TEST(GpuFakeTest, MeasuresEveryPartAtTheFakesRates) {
  fake::Fixture f;
  std::vector<std::string> steps;
  GpuProbeOptions options;
  options.progress = [&](const std::string& line) { steps.push_back(line); };
  GpuSystemProbe probe = cuda::ProbeGpusWith(f.Libraries(), options);
  f.ExpectClean();

  ASSERT_TRUE(probe.available) << probe.unavailable_reason;
  EXPECT_EQ(probe.cuda_driver_version, "12.4");
  EXPECT_EQ(probe.driver_version, "550.54.15");
  EXPECT_EQ(probe.cublas_version, "12.4.5");
  EXPECT_EQ(probe.nccl_version, "2.20.5");
  for (const std::string& note : probe.notes) ADD_FAILURE() << "note: " << note;
  ASSERT_EQ(probe.devices.size(), 2u);
  for (const GpuDeviceProbe& d : probe.devices) {
    SCOPED_TRACE(d.index);
    for (const std::string& note : d.notes) ADD_FAILURE() << "note: " << note;
    EXPECT_EQ(d.name, "Fake GPU " + std::to_string(d.index));
    EXPECT_EQ(d.compute_capability, "9.0");
    EXPECT_EQ(d.sm_count, 132);
    EXPECT_EQ(d.memory_bytes, 80.0 * fake::kGiB);
    EXPECT_NEAR(d.device_copy_bytes_per_s, 2e12, 2e12 * 1e-6);
    EXPECT_NEAR(d.host_to_device_bytes_per_s, 25e9, 25e9 * 1e-6);
    EXPECT_NEAR(d.device_to_host_bytes_per_s, 20e9, 20e9 * 1e-6);
    ASSERT_EQ(d.gemm.size(), 5u);
    const std::pair<const char*, double> expected[] = {
        {"fp32", 60e12}, {"tf32", 400e12}, {"fp16", 800e12}, {"bf16", 800e12}, {"fp8", 1600e12}};
    for (const auto& [precision, rate] : expected) {
      const GpuGemmResult* g = FindGemm(d, precision);
      ASSERT_NE(g, nullptr) << precision;
      EXPECT_TRUE(g->supported) << precision << ": " << g->note;
      EXPECT_NEAR(g->flops_per_s, rate, rate * 1e-6) << precision;
      EXPECT_TRUE(g->size == 4096 || g->size == 8192) << g->size;
      EXPECT_EQ(g->note, "");
    }
  }
  EXPECT_EQ(probe.devices[0].uuid, "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f");

  // FP8 ran as cuBLASLt requires it: A transposed, B not, with fast accumulation.
  ASSERT_FALSE(f.state.fp8_descs.empty());
  for (const fake::Matmul& m : f.state.fp8_descs) {
    EXPECT_EQ(m.trans_a, cuda::CUBLAS_OP_T);
    EXPECT_EQ(m.trans_b, cuda::CUBLAS_OP_N);
    EXPECT_EQ(m.fast_accum, 1);
  }

  // Both directions between the two GPUs, with peer access enabled for each.
  ASSERT_EQ(probe.peers.size(), 2u);
  for (const GpuPeerResult& p : probe.peers) {
    EXPECT_TRUE(p.peer_access);
    EXPECT_NEAR(p.bytes_per_s, 100e9, 100e9 * 1e-6);
  }
  EXPECT_EQ(f.state.peer_access.size(), 2u);

  ASSERT_TRUE(probe.allreduce_bus_bytes_per_s.has_value());
  EXPECT_GT(*probe.allreduce_bus_bytes_per_s, 0);
  EXPECT_EQ(probe.allreduce_message_bytes, 256.0 * fake::kMiB);
  EXPECT_EQ(f.state.allreduce_count, 256 * fake::kMiB / sizeof(float));
  EXPECT_EQ(f.state.allreduces % 2, 0);  // one per GPU in each group

  auto said = [&](const std::string& line) {
    return std::find(steps.begin(), steps.end(), line) != steps.end();
  };
  EXPECT_TRUE(said("GPU 1: BF16 GEMM 8192^3"));
  EXPECT_TRUE(said("GPU 0: FP8 GEMM 4096^3"));
  EXPECT_TRUE(said("NCCL all-reduce over 2 GPUs, 256 MiB each"));
}

TEST(GpuFakeTest, OlderGpuSkipsWhatItLacks) {
  fake::Fixture f;
  f.state.count = 1;
  f.state.cc_major = 7;
  f.state.cc_minor = 5;
  GpuProbeOptions options;
  options.quick = true;
  GpuSystemProbe probe = cuda::ProbeGpusWith(f.Libraries(), options);
  f.ExpectClean();
  ASSERT_TRUE(probe.available);
  ASSERT_EQ(probe.devices.size(), 1u);
  const GpuDeviceProbe& d = probe.devices[0];
  EXPECT_TRUE(FindGemm(d, "fp32")->supported);
  EXPECT_TRUE(FindGemm(d, "fp16")->supported);
  for (const char* precision : {"tf32", "bf16"}) {
    const GpuGemmResult* g = FindGemm(d, precision);
    EXPECT_FALSE(g->supported);
    EXPECT_TRUE(Contains(g->note, "compute capability 8.0")) << g->note;
  }
  EXPECT_FALSE(FindGemm(d, "fp8")->supported);
  EXPECT_TRUE(Contains(FindGemm(d, "fp8")->note, "8.9")) << FindGemm(d, "fp8")->note;
  // One GPU: nothing to copy to or reduce with, and nothing to say about it.
  EXPECT_TRUE(probe.peers.empty());
  EXPECT_FALSE(probe.allreduce_bus_bytes_per_s.has_value());
  EXPECT_TRUE(probe.notes.empty());
}

TEST(GpuFakeTest, FailuresBecomeNotesAndLeakNothing) {
  fake::Fixture f;
  f.state.alloc_limit = 200 * fake::kMiB;  // an 8192^2 FP32 matrix (256 MiB) does not fit
  GpuSystemProbe probe = cuda::ProbeGpusWith(f.Libraries(), GpuProbeOptions{});
  f.ExpectClean();
  ASSERT_TRUE(probe.available);
  const GpuDeviceProbe& d = probe.devices[0];
  const GpuGemmResult* fp32 = FindGemm(d, "fp32");
  EXPECT_TRUE(fp32->supported);
  EXPECT_EQ(fp32->size, 4096);
  EXPECT_TRUE(Contains(fp32->note, "8192^3: cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY"))
      << fp32->note;
  // The 1 GiB copy buffers do not fit either.
  EXPECT_EQ(d.device_copy_bytes_per_s, 0);
  bool copy_note = false;
  for (const std::string& note : d.notes) copy_note |= Contains(note, "device memory copy");
  EXPECT_TRUE(copy_note);
  // Peers fall back on nothing; the all-reduce's 256 MiB buffers fail too.
  bool allreduce_note = false;
  for (const std::string& note : probe.notes) allreduce_note |= Contains(note, "all-reduce");
  EXPECT_TRUE(allreduce_note);
  EXPECT_FALSE(probe.allreduce_bus_bytes_per_s.has_value());
}

TEST(GpuFakeTest, MissingLibrariesAreNoted) {
  fake::Fixture f;
  GpuProbeOptions options;
  options.quick = true;
  GpuSystemProbe probe =
      cuda::ProbeGpusWith(f.Libraries(/*with_cublas=*/false, /*with_nccl=*/false), options);
  f.ExpectClean();
  ASSERT_TRUE(probe.available);
  EXPECT_TRUE(probe.cublas_version.empty());
  EXPECT_TRUE(probe.nccl_version.empty());
  EXPECT_TRUE(probe.devices[0].gemm.empty());
  EXPECT_GT(probe.devices[0].device_copy_bytes_per_s, 0);
  std::string notes = Join(probe.notes, "\n");
  EXPECT_TRUE(Contains(notes, "libcublasLt.so.12")) << notes;
  EXPECT_TRUE(Contains(notes, "libnccl.so.2")) << notes;
  EXPECT_EQ(probe.peers.size(), 2u);
}

TEST(GpuFakeTest, DriverThatDoesNotStart) {
  fake::Fixture f;
  f.state.init_result = cuda::CUDA_ERROR_NO_DEVICE;
  GpuSystemProbe probe = cuda::ProbeGpusWith(f.Libraries(), GpuProbeOptions{});
  EXPECT_FALSE(probe.available);
  EXPECT_TRUE(Contains(probe.unavailable_reason, "CUDA_ERROR_NO_DEVICE"))
      << probe.unavailable_reason;
  f.state.init_result = cuda::CUDA_ERROR_STUB_LIBRARY;
  probe = cuda::ProbeGpusWith(f.Libraries(), GpuProbeOptions{});
  EXPECT_TRUE(Contains(probe.unavailable_reason, "stub")) << probe.unavailable_reason;
  f.state.init_result = 0;
  f.state.count = 0;
  probe = cuda::ProbeGpusWith(f.Libraries(), GpuProbeOptions{});
  EXPECT_FALSE(probe.available);
  EXPECT_TRUE(Contains(probe.unavailable_reason, "no GPU")) << probe.unavailable_reason;
  f.ExpectClean();
}

TEST(GpuFakeTest, SamplerReadsEveryDevice) {
  fake::Fixture f;
  std::string why_not;
  {
    std::unique_ptr<GpuSampler> sampler = cuda::OpenGpuSamplerWith(f.nvml(), &why_not);
    ASSERT_NE(sampler, nullptr) << why_not;
    ASSERT_EQ(sampler->device_count(), 2);
    std::vector<GpuSample> samples = sampler->Sample();
    ASSERT_EQ(samples.size(), 2u);
    EXPECT_EQ(samples[0].index, 0);
    EXPECT_EQ(samples[1].name, "Fake GPU 1");
    EXPECT_EQ(samples[0].utilization_percent, 40);
    EXPECT_EQ(samples[1].utilization_percent, 50);
    EXPECT_EQ(samples[0].memory_total_bytes, 80.0 * fake::kGiB);
    EXPECT_EQ(samples[0].memory_used_bytes, 10.0 * fake::kGiB);
    EXPECT_DOUBLE_EQ(samples[0].power_watts, 350.5);
    EXPECT_EQ(samples[1].power_watts, 0);  // not supported there
    EXPECT_EQ(samples[0].sm_clock_mhz, 1980);
    EXPECT_EQ(samples[0].memory_clock_mhz, 2619);
    EXPECT_EQ(f.state.nvml_inits, 1);
  }
  EXPECT_EQ(f.state.nvml_inits, 0);  // the sampler shut NVML down
  f.state.count = 0;
  EXPECT_EQ(cuda::OpenGpuSamplerWith(f.nvml(), &why_not), nullptr);
  EXPECT_TRUE(Contains(why_not, "no GPU")) << why_not;
  EXPECT_EQ(f.state.nvml_inits, 0);
}

}  // namespace
}  // namespace cloudfit

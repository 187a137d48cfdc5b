// The CPU probe: parsing /proc/cpuinfo, placing the CPU in the catalog, the three measurements,
// the report beside the catalog's peaks, and the command line.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cloudfit/cpu_probe.h"
#include "cloudfit/probe_report.h"
#include "test_support.h"

namespace cloudfit {
namespace {

using testing::BuiltInCatalog;
using testing::TempDir;

constexpr const char* kTwoSocketIntel = R"(processor	: 0
vendor_id	: GenuineIntel
cpu family	: 6
model		: 143
model name	: Intel(R) Xeon(R) Platinum 8488C
stepping	: 8
physical id	: 0
core id		: 0
flags		: fpu sse sse2 fma avx avx2 avx512f avx512_bf16 amx_tile amx_bf16 amx_int8

processor	: 1
vendor_id	: GenuineIntel
model name	: Intel(R) Xeon(R) Platinum 8488C
physical id	: 0
core id		: 0
flags		: fpu sse sse2 fma avx avx2 avx512f avx512_bf16 amx_tile amx_bf16 amx_int8

processor	: 2
physical id	: 1
core id		: 0
flags		: fpu sse sse2 fma avx avx2 avx512f avx512_bf16 amx_tile amx_bf16 amx_int8
)";

constexpr const char* kBareAmdVm = R"(processor	: 0
vendor_id	: AuthenticAMD
cpu family	: 26
model		: 2
model name	: AMD EPYC
flags		: fpu fma avx avx2 avx512f
)";

constexpr const char* kGraviton4 = R"(processor	: 0
BogoMIPS	: 2000.00
Features	: fp asimd evtstrm aes sve sve2 bf16 i8mm
CPU implementer	: 0x41
CPU architecture: 8
CPU part	: 0xd4f

processor	: 1
Features	: fp asimd evtstrm aes sve sve2 bf16 i8mm
CPU implementer	: 0x41
CPU part	: 0xd4f
)";

TEST(CpuProbeTest, ParsesAnIntelServerWithTopologyAndAmx) {
  CpuIdentity cpu = ParseCpuInfo(kTwoSocketIntel);
  EXPECT_EQ(cpu.vendor, "GenuineIntel");
  EXPECT_EQ(cpu.arch, "x86_64");
  EXPECT_EQ(cpu.logical_cpus, 3);
  EXPECT_EQ(cpu.sockets, 2);
  EXPECT_EQ(cpu.physical_cores, 2);  // two hyperthreads of core 0 on socket 0, one on socket 1
  EXPECT_EQ(cpu.widest_isa, "amx");
  EXPECT_NE(std::find(cpu.features.begin(), cpu.features.end(), "avx512_bf16"),
            cpu.features.end());
  // Only the flags that decide arithmetic rates are kept.
  EXPECT_EQ(std::find(cpu.features.begin(), cpu.features.end(), "sse2"), cpu.features.end());
  const CpuGeneration* gen = MatchCpuGeneration(BuiltInCatalog(), cpu);
  ASSERT_NE(gen, nullptr);
  EXPECT_EQ(gen->name, "Intel Xeon Sapphire Rapids");
}

TEST(CpuProbeTest, PlacesABareModelNameByFamilyAndModel) {
  CpuIdentity cpu = ParseCpuInfo(kBareAmdVm);
  EXPECT_EQ(cpu.model_name, "AMD EPYC (Turin)");
  EXPECT_EQ(cpu.widest_isa, "avx512");
  const CpuGeneration* gen = MatchCpuGeneration(BuiltInCatalog(), cpu);
  ASSERT_NE(gen, nullptr);
  EXPECT_EQ(gen->name, "AMD EPYC Turin");
}

TEST(CpuProbeTest, ParsesAnArmServerByPartNumber) {
  CpuIdentity cpu = ParseCpuInfo(kGraviton4);
  EXPECT_EQ(cpu.arch, "arm64");
  EXPECT_EQ(cpu.logical_cpus, 2);
  EXPECT_EQ(cpu.model_name, "Neoverse-V2");
  EXPECT_EQ(cpu.widest_isa, "sve");
  const CpuGeneration* gen = MatchCpuGeneration(BuiltInCatalog(), cpu);
  ASSERT_NE(gen, nullptr);
  EXPECT_EQ(gen->name, "AWS Graviton4");
}

TEST(CpuProbeTest, UnknownCpuHasNoGeneration) {
  CpuIdentity cpu = ParseCpuInfo("processor : 0\nvendor_id : Hygon\nmodel name : Mystery 1\n");
  EXPECT_EQ(MatchCpuGeneration(BuiltInCatalog(), cpu), nullptr);
}

TEST(CpuProbeTest, PeakPerThreadIsAWholeCoreWhenNoSiblingsAreVisible) {
  const CpuGeneration* turin = BuiltInCatalog().FindCpu("Turin");
  ASSERT_NE(turin, nullptr);
  ASSERT_EQ(turin->threads_per_core, 2);
  // Four logical CPUs on two cores: SMT siblings, each half a core as clouds sell vCPUs.
  EXPECT_DOUBLE_EQ(Fp32PeakPerThread(*turin, 4, 2), turin->fp32_flops_per_vcpu);
  // Two logical CPUs on two cores: each thread has a core to itself.
  EXPECT_DOUBLE_EQ(Fp32PeakPerThread(*turin, 2, 2), 2 * turin->fp32_flops_per_vcpu);
  // The topology unknown (arm64 cpuinfo says nothing): the catalog's vCPU figure.
  EXPECT_DOUBLE_EQ(Fp32PeakPerThread(*turin, 2, 0), turin->fp32_flops_per_vcpu);
}

TEST(CpuProbeTest, OtherLoadMeterSeesABusyNeighbour) {
  OtherLoadMeter meter;
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Spins until killed; the volatile read keeps the loop from being optimised away.
    volatile bool spin = true;
    while (spin) {
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  double others = meter.OthersBusyFraction();
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  // One busy core of however many: at least a little, never more than all of them.
  EXPECT_GT(others, 0.5 / std::thread::hardware_concurrency());
  EXPECT_LE(others, 1.0);
}

TEST(CpuProbeTest, IdentifiesThisMachine) {
  CpuIdentity cpu = IdentifyCpu();
  EXPECT_GE(cpu.logical_cpus, 1);
  EXPECT_GE(cpu.usable_cpus, 1);
  EXPECT_LE(cpu.usable_cpus, cpu.logical_cpus);
  EXPECT_FALSE(cpu.arch.empty());
}

TEST(CpuProbeTest, GemmAndTriadGiveCheckedPlausibleRates) {
  CpuProbeOptions options;
  options.quick = true;
  int steps = 0;
  options.progress = [&steps](const std::string&) { ++steps; };
  CpuGemmResult gemm;
  ASSERT_TRUE(MeasureCpuGemm(options, &gemm).ok());
  EXPECT_GE(gemm.size, 512);
  EXPECT_GE(gemm.threads, 1);
  // Above a 1990s CPU, below 1 TFLOP/s of FP32 per thread, which no CPU core reaches.
  EXPECT_GT(gemm.flops_per_s, 1e8);
  EXPECT_LT(gemm.flops_per_s, 1e12 * gemm.threads);
  EXPECT_FALSE(gemm.library.empty());

  CpuBandwidthResult triad;
  ASSERT_TRUE(MeasureMemoryBandwidth(options, &triad).ok());
  EXPECT_GT(triad.bytes_per_s, 1e8);
  EXPECT_LT(triad.bytes_per_s, 2e12);
  EXPECT_GE(triad.array_bytes, 64.0 * 1048576);  // beyond caches
  EXPECT_GE(steps, 2);  // progress was reported
}

TEST(CpuProbeTest, ReadThroughputReadsFilesUpToTheLimit) {
  TempDir dir;
  std::string big(3 << 20, 'x');
  dir.Write("data/a.bin", big);
  dir.Write("data/sub/b.bin", big);
  CpuProbeOptions options;
  ReadThroughputResult all;
  ASSERT_TRUE(MeasureReadThroughput(dir.path() + "/data", 1e9, options, &all).ok());
  EXPECT_EQ(all.files, 2);
  EXPECT_DOUBLE_EQ(all.bytes, 2.0 * big.size());
  EXPECT_GT(all.bytes_per_s, 0);

  ReadThroughputResult limited;
  ASSERT_TRUE(MeasureReadThroughput(dir.path() + "/data/a.bin", 1 << 20, options, &limited).ok());
  EXPECT_EQ(limited.files, 1);
  EXPECT_GE(limited.bytes, 1 << 20);
  EXPECT_LE(limited.bytes, static_cast<double>(big.size()));
}

TEST(CpuProbeTest, ReadThroughputRejectsMissingAndEmptyPaths) {
  TempDir dir;
  CpuProbeOptions options;
  ReadThroughputResult r;
  Status missing = MeasureReadThroughput(dir.path() + "/nope", 1e6, options, &r);
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("does not exist"), std::string::npos);
  Status empty = MeasureReadThroughput(dir.path(), 1e6, options, &r);
  EXPECT_FALSE(empty.ok());
  EXPECT_NE(empty.message().find("no regular file"), std::string::npos);
  EXPECT_FALSE(MeasureReadThroughput(dir.path(), -1, options, &r).ok());
}

TEST(CpuProbeTest, MatchesDriverGpuNamesToTheCatalog) {
  const Catalog& catalog = BuiltInCatalog();
  struct Case {
    const char* driver_name;
    const char* catalog_name;
  };
  for (const Case& c : {Case{"NVIDIA H100 80GB HBM3", "H100-SXM5-80GB"},
                        Case{"NVIDIA H100 PCIe", "H100-PCIE-80GB"},
                        Case{"Tesla V100-SXM2-16GB", "V100-SXM2-16GB"},
                        Case{"NVIDIA A100-SXM4-80GB", "A100-SXM4-80GB"},
                        Case{"NVIDIA A10G", "A10G"},
                        Case{"NVIDIA L4", "L4"}}) {
    const Accelerator* acc = catalog.FindAcceleratorByDriverName(c.driver_name);
    ASSERT_NE(acc, nullptr) << c.driver_name;
    EXPECT_EQ(acc->name, c.catalog_name) << c.driver_name;
  }
  EXPECT_EQ(catalog.FindAcceleratorByDriverName("Imaginary GPU 9000"), nullptr);
}

TEST(CpuProbeTest, ReportSetsMeasurementsBesideCatalogPeaks) {
  const Catalog& catalog = BuiltInCatalog();
  ProbeResult r;
  r.cpu = ParseCpuInfo(kTwoSocketIntel);
  r.cpu_gemm = CpuGemmResult{200e9, 2048, 3, "test"};
  GpuSystemProbe gpu;
  gpu.available = true;
  GpuDeviceProbe device;
  device.name = "NVIDIA H100 80GB HBM3";
  device.gemm.push_back({"bf16", true, 780e12, 8192, ""});
  device.device_copy_bytes_per_s = 3.0e12;
  gpu.devices.push_back(device);
  r.gpu = gpu;

  const CpuGeneration* spr = catalog.FindCpu("Sapphire Rapids");
  const Accelerator* h100 = nullptr;
  ASSERT_TRUE(catalog.FindAccelerator("H100-SXM5-80GB", &h100).ok());
  std::vector<ProbeFigure> figures = ProbeFigures(catalog, r);
  ASSERT_EQ(figures.size(), 3u);
  ASSERT_TRUE(figures[0].peak.has_value());
  EXPECT_DOUBLE_EQ(*figures[0].peak, 3 * spr->fp32_flops_per_vcpu);
  EXPECT_EQ(figures[1].measure, "BF16 GEMM");
  EXPECT_DOUBLE_EQ(*figures[1].peak, *h100->peak(Precision::kBf16));
  EXPECT_DOUBLE_EQ(*figures[2].peak, h100->memory_bandwidth_bytes_per_s);

  nlohmann::json doc = ProbeToJson(catalog, r);
  EXPECT_EQ(doc["schema"], "cloudfit.probe/v1");
  EXPECT_EQ(doc["gpu"]["devices"][0]["catalog_name"], "H100-SXM5-80GB");
  EXPECT_NEAR(doc["figures"][1]["percent_of_peak"].get<double>(),
              100 * 780e12 / *h100->peak(Precision::kBf16), 1e-9);
  std::string text = FormatProbeText(catalog, r);
  EXPECT_NE(text.find("BF16 GEMM"), std::string::npos);
  EXPECT_NE(text.find("780.0 TFLOP/s"), std::string::npos);
}

// The command's stdout and stderr together, and its exit code.
int RunCli(const std::string& args, std::string* out) {
  testing::TempDir dir;
  testing::ProgramRun r = testing::RunCloudfit(dir, args);
  *out = r.out + r.err;
  return r.exit_code;
}

TEST(CpuProbeTest, CommandPrintsJsonAndWritesTheResult) {
  TempDir dir;
  std::string out;
  ASSERT_EQ(RunCli("probe --quick --no-gpu --quiet --json --out " + dir.path() + "/p.json",
                   &out),
            0)
      << out;
  nlohmann::json doc = nlohmann::json::parse(out);
  EXPECT_EQ(doc["schema"], "cloudfit.probe/v1");
  EXPECT_GT(doc["cpu"]["gemm_fp32"]["flops_per_s"].get<double>(), 0);
  EXPECT_FALSE(doc.contains("gpu"));
  std::ifstream saved(dir.path() + "/p.json");
  EXPECT_EQ(nlohmann::json::parse(saved), doc);
}

TEST(CpuProbeTest, CommandWithoutAGpuSaysSoAndMeasuresTheCpu) {
  std::string out;
  ASSERT_EQ(RunCli("probe --quick --quiet --threads 1", &out), 0) << out;
  EXPECT_NE(out.find("FP32 GEMM"), std::string::npos) << out;
  EXPECT_NE(out.find("memory triad"), std::string::npos) << out;
  if (out.find("GPU 0:") == std::string::npos) {
    EXPECT_NE(out.find("GPU: none measured"), std::string::npos) << out;
  }
}

TEST(CpuProbeTest, CommandRejectsBadFlagsNamingThem) {
  std::string out;
  EXPECT_EQ(RunCli("probe --threads -3", &out), 2);
  EXPECT_NE(out.find("--threads"), std::string::npos) << out;
  EXPECT_EQ(RunCli("probe --quick --no-gpu --path /no/such/path", &out), 2);
  EXPECT_NE(out.find("--path"), std::string::npos) << out;
  EXPECT_EQ(RunCli("probe --read-mib -1", &out), 2);
  EXPECT_NE(out.find("--read-mib"), std::string::npos) << out;
}

}  // namespace
}  // namespace cloudfit

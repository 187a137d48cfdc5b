// An accelerator (GPU) as its datasheet describes it. Figures are SI: bytes, bytes/s, FLOP/s.
#ifndef CLOUDFIT_ACCELERATOR_H_
#define CLOUDFIT_ACCELERATOR_H_

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cloudfit/shared_text.h"

namespace cloudfit {

// Numeric formats with a datasheet peak. Tensor-core peaks where the hardware has them.
enum class Precision { kFp32, kTf32, kFp16, kBf16, kFp8, kInt8 };
inline constexpr int kPrecisionCount = 6;
std::string_view PrecisionName(Precision precision);  // "fp32", "tf32", ...
bool ParsePrecision(std::string_view name, Precision* out);

struct Accelerator {
  std::string name;  // canonical, e.g. "A100-SXM4-80GB"
  std::string vendor;
  std::vector<std::string> aliases;
  std::string architecture;
  std::string compute_capability;  // empty for non-NVIDIA parts
  std::string form_factor;
  double memory_bytes = 0;
  std::string memory_type;
  double memory_bandwidth_bytes_per_s = 0;
  // Dense peak per precision; nullopt where the hardware has no support for it.
  std::array<std::optional<double>, kPrecisionCount> peak_flops;
  // What the board sustains, beyond the datasheet peaks (all optional; see docs/data-format.md).
  int sm_count = 0;                // streaming multiprocessors (NVIDIA) or compute units (AMD)
  double peak_clock_mhz = 0;       // the clock the datasheet peaks are computed at
  double sustained_clock_mhz = 0;  // held in long dense GEMMs under the power limit; 0 unknown
  // FP16 tensor rate with FP16 accumulation: twice the FP32-accumulate rate on GeForce boards,
  // equal to it elsewhere. Engines that accumulate in FP16 (llama.cpp's cuBLAS path) get it.
  std::optional<double> fp16_acc16_flops;
  double l2_cache_bytes = 0;
  // Measured device-memory bandwidth (a STREAM-style copy, bytes read + written); 0 unknown.
  double measured_bandwidth_bytes_per_s = 0;
  // Published large dense GEMM rates (cuBLAS/hipBLAS through PyTorch): what the board sustains
  // at its real clock under its power limit, FP32 accumulation for 16-bit formats. Unset where
  // no measurement is published.
  std::optional<double> measured_gemm_fp16_flops;  // best of FP16 and BF16
  std::optional<double> measured_gemm_tf32_flops;
  std::optional<double> measured_gemm_fp8_flops;
  SharedText physics_source;      // where the figures above come from
  double nvlink_bytes_per_s = 0;  // both directions, per GPU; 0 without NVLink
  int pcie_gen = 0;
  double tdp_w = 0;
  int rt_cores = 0;
  int nvenc = 0;
  bool av1_encode = false;
  bool vgpu = false;
  int launch_year = 0;
  SharedText source;
  std::string as_of;
  SharedText notes;

  std::optional<double> peak(Precision p) const { return peak_flops[static_cast<int>(p)]; }
  // Datasheets' "GB" of GPU memory, which are GiB (see docs/data-format.md).
  double memory_gib() const { return memory_bytes / (1024.0 * 1024.0 * 1024.0); }
};

}  // namespace cloudfit

#endif  // CLOUDFIT_ACCELERATOR_H_

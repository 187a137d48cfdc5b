// What one device sustains at one numeric format: the matrix rate (what a large dense GEMM
// reaches at the clock the board holds under its power limit), the vector rate, the achievable
// memory bandwidth for its memory type, and the SM count that wave quantisation needs. Everything
// here comes from data/accelerators.csv (or data/cpus.csv) and the cited fractions of
// data/efficiency.csv; nothing is fitted per GPU.
#ifndef CLOUDFIT_ESTIMATE_DEVICE_MODEL_H_
#define CLOUDFIT_ESTIMATE_DEVICE_MODEL_H_

#include <string>
#include <vector>

#include "cloudfit/efficiency.h"
#include "cloudfit/hardware.h"
#include "cloudfit/workload.h"

namespace cloudfit {

struct DeviceModel {
  std::string name;  // the accelerator or CPU generation
  bool gpu = true;
  // The units a matrix multiply at this format runs on: tensor-fp16, tensor-tf32, tensor-fp8,
  // tensor-int8, simt-fp32 (GPUs without tensor cores, or FP32 before Ampere), cpu.
  std::string math_unit;
  double peak_matrix_flops = 0;  // datasheet dense peak at the format
  // The share of the datasheet a large GEMM sustains (measured, or from the sustained clock).
  double clock_ratio = 1;
  double matrix_flops = 0;         // what a large dense GEMM sustains at the format
  double vector_flops = 0;         // non-tensor FP32 at the sustained clock
  double fp16_acc16_flops = 0;     // FP16 tensor rate accumulating in FP16 (0: as matrix_flops)
  double int8_flops = 0;           // INT8 tensor rate (0: none)
  double datasheet_bandwidth = 0;  // bytes/s
  double bandwidth = 0;            // achievable bytes/s
  int sm_count = 0;                // SMs or CUs; vCPUs for a CPU
  double sm_clock_ghz = 0;         // the SMs' clock (sustained, else datasheet); 0 unknown
  double l2_bytes = 0;
  double memory_bytes = 0;      // per device
  double activation_bytes = 2;  // bytes per activation element at the format
  double weight_bytes = 2;      // bytes per weight read by a matrix multiply (4.5/8 for int4)
  // Assumptions a user should see ("sustained clock unknown: the datasheet clock is assumed").
  std::vector<std::string> notes;
};

// The device `hardware` runs `format` on, with `calibration` (a measured-throughput or probe
// scale) applied to its rates.
DeviceModel BuildDeviceModel(const EfficiencyTable& efficiency, const Hardware& hardware,
                             NumericFormat format, const RateScale& calibration);

// The matrix rate the workload's software reaches on this device: libraries built before CUDA
// 12.0 have no kernels for Hopper's asynchronous warp-group MMA (wgmma) and tensor memory
// accelerator (TMA), and run Ampere's mma.sync kernels, which reach a fraction of the rate.
void ApplySoftwareToolkit(const EfficiencyTable& efficiency, const Hardware& hardware,
                          double cuda_version, DeviceModel* device);

// Whether a GPU keeps error-correction check bits in its data memory (in-band ECC) by default:
// GDDR data-centre boards do, which costs 1/16 of the memory and part of the bandwidth;
// workstation (Quadro, RTX A/Ada) and GeForce boards ship with ECC off; HBM carries its check
// bits apart from the data.
bool RunsInBandEcc(const Accelerator& gpu);

// Matrix tile edge cuBLAS/cuDNN kernels assign to one SM (tensor cores: 128 x 128 outputs;
// SIMT FP32: 128 x 64). Used for wave quantisation.
struct TileShape {
  double rows = 128;
  double cols = 128;
};
TileShape MatrixTile(const DeviceModel& device);

}  // namespace cloudfit

#endif  // CLOUDFIT_ESTIMATE_DEVICE_MODEL_H_

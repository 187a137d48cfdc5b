// Public measurements turned into test cases: each row of shared/calibration/ becomes a workload,
// a hardware choice, a metric and the measured value, so predictions can be scored against it.
#ifndef CLOUDFIT_CALIBRATION_H_
#define CLOUDFIT_CALIBRATION_H_

#include <map>
#include <string>
#include <vector>

#include "cloudfit/catalog.h"
#include "cloudfit/hardware.h"
#include "cloudfit/workload.h"

namespace cloudfit {

// What a case measures; each family has its own error target.
enum class MetricFamily {
  kTrainingThroughput,  // samples/s, tokens/s, images/s of training
  kLlmDecode,           // generated tokens/s
  kLlmPrefill,          // prompt tokens/s
  kMemory,              // bytes on the GPU
  kFits,                // 1 fits, 0 out of memory (scored as agreement, not percentage)
  // Large-model training at scale (tests/calibration/large_model_training.csv): a check of
  // generality, never used for fitting.
  kLargeModelTraining,
};
std::string_view MetricFamilyName(MetricFamily family);

struct CalibrationCase {
  std::string id;      // file:line
  std::string source;  // the row's source (repository@commit:path)
  MetricFamily family = MetricFamily::kTrainingThroughput;
  std::string gpu;  // as the row names it, for per-GPU summaries
  int num_gpus = 1;
  Workload workload;  // finalized
  HardwareSpec hardware;
  double measured = 0;  // in SI (bytes) for memory, in the row's unit otherwise
  // Factor from the estimate's throughput unit to the row's (1/seq_len for sequences/s; FLOPs
  // per token over GPUs and peak for MFU).
  double throughput_scale = 1;
  // The benchmark trains `num_gpus` copies that never synchronise (the harness launches several
  // processes without wrapping the model for data parallelism): predicted as one GPU's
  // throughput times the count.
  bool independent_replicas = false;
  // What the row's source leaves unstated and the loader assumed, for --cases.
  std::string assumption;
  // Rows a bottleneck the estimator does not represent decides are scored but never fitted,
  // so they cannot bend the parameters that describe everything else.
  bool fitted = true;
  // From tests/calibration: public figures the fit never sees, reported apart.
  bool held_out = false;
  // A memory figure from PyTorch's caching allocator (torch.cuda.memory_reserved and kin): the
  // CUDA context is outside it, so it is compared with the estimate less kCudaContextBytes.
  bool allocator_view = false;
};

struct SkippedRow {
  std::string id;
  std::string reason;
};

// Reads every row of `dir`/train_throughput.csv and `dir`/llm_memory_and_speed.csv. Rows that
// describe something cloudfit does not model (CPU memory, CPU offload) are returned in
// `skipped` with the reason; nothing is dropped silently.
Status LoadCalibrationCases(const Catalog& catalog, const std::string& dir,
                            std::vector<CalibrationCase>* cases, std::vector<SkippedRow>* skipped);

// Reads large-model training measurements (MFU, model TFLOP/s or tokens/s per GPU at scale)
// from a CSV in the layout of tests/calibration/large_model_training.csv.
Status LoadLargeModelCases(const Catalog& catalog, const std::string& path,
                           std::vector<CalibrationCase>* cases, std::vector<SkippedRow>* skipped);

// Reads any table of tests/calibration (training throughput in train_throughput.csv's layout,
// large-model training, or the workload-fields layout), as held-out cases: scored, never fitted.
Status LoadExtraCases(const Catalog& catalog, const std::string& path,
                      std::vector<CalibrationCase>* cases, std::vector<SkippedRow>* skipped);

// The prediction for a case, in the case's unit.
Status PredictCase(const Catalog& catalog, const CalibrationCase& c, double* predicted);

struct ErrorStats {
  int cases = 0;
  double median_ape = 0;  // absolute percentage error, as a fraction
  double p90_ape = 0;
  double agreement = 0;  // kFits: share of cases where fits/does-not-fit is right
};

// The q-quantile (0..1) of `values`, interpolated between ranks; 0 for none.
double Percentile(std::vector<double> values, double q);

// Median and 90th-percentile errors per family, per family and GPU ("family/gpu"), and overall
// per family ("family").
std::map<std::string, ErrorStats> ScoreCases(const Catalog& catalog,
                                             const std::vector<CalibrationCase>& cases);

}  // namespace cloudfit

#endif  // CLOUDFIT_CALIBRATION_H_

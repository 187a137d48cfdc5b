#include "cloudfit/measured_calibration.h"

#include <cmath>

#include <fmt/format.h>

#include "cloudfit/estimate.h"
#include "util/strings.h"
#include "util/validate.h"

namespace cloudfit {

namespace {

constexpr const char* kAllowedUnits =
    "it/s, s/it, samples/s (or images/s, sequences/s), tokens/s, frames/h";

enum class UnitKind { kStepsPerS, kSecondsPerStep, kSamplesPerS, kTokensPerS, kFramesPerH };

bool ParseUnit(std::string unit, UnitKind* kind) {
  unit = ToLower(unit);
  if (unit == "it/s" || unit == "its/s" || unit == "steps/s" || unit == "step/s") {
    *kind = UnitKind::kStepsPerS;
  } else if (unit == "s/it" || unit == "s/step" || unit == "sec/it") {
    *kind = UnitKind::kSecondsPerStep;
  } else if (unit == "samples/s" || unit == "sample/s" || unit == "images/s" ||
             unit == "img/s" || unit == "sequences/s" || unit == "seq/s") {
    *kind = UnitKind::kSamplesPerS;
  } else if (unit == "tokens/s" || unit == "tok/s" || unit == "token/s") {
    *kind = UnitKind::kTokensPerS;
  } else if (unit == "frames/h") {
    *kind = UnitKind::kFramesPerH;
  } else {
    return false;
  }
  return true;
}

// The estimate's figure in the measurement's unit.
Status ConvertPrediction(const Workload& w, const Estimate& e, UnitKind kind, double* out) {
  switch (kind) {
    case UnitKind::kStepsPerS:
    case UnitKind::kSecondsPerStep:
      if (!(e.time.step_s > 0)) break;
      *out = kind == UnitKind::kStepsPerS ? 1 / e.time.step_s : e.time.step_s;
      return Status::OK();
    case UnitKind::kSamplesPerS:
      if (e.throughput_unit == "samples/s" || e.throughput_unit == "images/s") {
        *out = e.throughput;
        return Status::OK();
      }
      if (w.is_training() && e.throughput_unit == "tokens/s" && w.seq_len > 0) {
        *out = e.throughput / w.seq_len;
        return Status::OK();
      }
      break;
    case UnitKind::kTokensPerS:
      if (e.throughput_unit == "tokens/s") {
        *out = e.throughput;
        return Status::OK();
      }
      break;
    case UnitKind::kFramesPerH:
      if (e.throughput_unit == "frames/h") {
        *out = e.throughput;
        return Status::OK();
      }
      break;
  }
  return Status::InvalidArgument(fmt::format(
      "measured: this workload's estimate is in {}, which the unit given cannot be compared with",
      e.throughput_unit));
}

bool Increasing(UnitKind kind) { return kind != UnitKind::kSecondsPerStep; }

}  // namespace

namespace {

// The parts of "<number> <unit> on [<count>x] <device> [x<nodes>]", as written.
struct MeasurementParts {
  std::string_view value, unit, count, device, nodes;
};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool IsUnitChar(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '/'; }

// A decimal "[digits][.]digits" at the start of `s`, with an exponent when `exponent`; its
// length, or 0 when there is none.
size_t ScanDecimal(std::string_view s, bool exponent) {
  size_t i = 0;
  while (i < s.size() && IsDigit(s[i])) ++i;
  size_t integer_digits = i;
  if (i < s.size() && s[i] == '.') {
    size_t fraction_start = ++i;
    while (i < s.size() && IsDigit(s[i])) ++i;
    if (i == fraction_start) i = fraction_start - 1;  // "1." is "1" followed by "."
  }
  if (i == 0 || (integer_digits == 0 && i == 1)) return 0;
  if (exponent && i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    size_t j = i + 1;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
    size_t digits = j;
    while (j < s.size() && IsDigit(s[j])) ++j;
    if (j > digits) i = j;
  }
  return i;
}

std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// A hand-written scanner: linear in the text, no recursion, no backtracking (std::regex
// recursed once per character and overflowed the stack on long input).
bool SplitMeasurement(std::string_view text, MeasurementParts* out) {
  std::string_view s = TrimSpace(text);
  size_t n = ScanDecimal(s, true);
  if (n == 0) return false;
  out->value = s.substr(0, n);
  s.remove_prefix(n);
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  size_t unit = 0;
  while (unit < s.size() && IsUnitChar(s[unit])) ++unit;
  if (unit == 0) return false;
  out->unit = s.substr(0, unit);
  s.remove_prefix(unit);
  // At least one space, "on", at least one space.
  if (s.empty() || !IsSpace(s.front())) return false;
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  if (s.substr(0, 2) != "on" || s.size() < 3 || !IsSpace(s[2])) return false;
  s.remove_prefix(2);
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  // An optional "<count>x" before the device, taken only when a device follows it.
  out->count = {};
  size_t count = ScanDecimal(s, false);
  if (count > 0) {
    size_t i = count;
    while (i < s.size() && IsSpace(s[i])) ++i;
    if (i < s.size() && s[i] == 'x') {
      std::string_view rest = TrimSpace(s.substr(i + 1));
      if (!rest.empty()) {
        out->count = s.substr(0, count);
        s = rest;
      }
    }
  }
  s = TrimSpace(s);
  // An optional " x<nodes>" after the device.
  out->nodes = {};
  size_t end = s.size();
  while (end > 0 && IsDigit(s[end - 1])) --end;
  if (end < s.size()) {
    size_t x = end;
    while (x > 0 && IsSpace(s[x - 1])) --x;
    if (x > 0 && s[x - 1] == 'x' && x >= 2 && IsSpace(s[x - 2])) {
      std::string_view device = TrimSpace(s.substr(0, x - 1));
      if (!device.empty()) {
        out->nodes = s.substr(end);
        s = device;
      }
    }
  }
  if (s.empty()) return false;
  out->device = s;
  return true;
}

}  // namespace

Status ParseThroughputMeasurement(const Catalog& catalog, std::string_view text,
                                  ThroughputMeasurement* out) {
  Status checked = CheckText("measured", text);
  if (!checked.ok()) return checked;
  MeasurementParts parts;
  if (!SplitMeasurement(text, &parts)) {
    return Status::InvalidArgument(fmt::format(
        "measured: '{}' is not '<number> <unit> on <N>x <GPU>' or '<number> <unit> on "
        "<instance type>', e.g. '1.9 it/s on 1x A10'",
        Shown(text)));
  }
  ThroughputMeasurement t;
  t.text = std::string(TrimSpace(text));
  if (!ParseDouble(parts.value, &t.value) || !(t.value > 0)) {
    return Status::InvalidArgument("measured: the value must be a positive number");
  }
  UnitKind kind;
  if (!ParseUnit(std::string(parts.unit), &kind)) {
    return Status::InvalidArgument(fmt::format("measured: unit '{}' is not one of {}",
                                               Shown(parts.unit), kAllowedUnits));
  }
  t.unit = std::string(parts.unit);
  std::string device(parts.device);
  Status s = CheckName("measured: the device", device);
  if (!s.ok()) return s;
  if (!parts.nodes.empty()) {
    long long nodes = 0;
    s = ParseWholeNumber("measured: the node count", parts.nodes, 1, 100000, "nodes", &nodes);
    if (!s.ok()) return s;
    t.hardware.nodes = static_cast<int>(nodes);
  }
  const InstanceType* instance = nullptr;
  if (parts.count.empty() && catalog.FindInstance(device, &instance).ok()) {
    t.hardware.instance = instance->name;
  } else {
    const Accelerator* gpu = nullptr;
    Status found = catalog.FindAccelerator(device, &gpu);
    if (!found.ok()) {
      return Status::InvalidArgument(fmt::format(
          "measured: '{}' is neither an instance type nor a GPU: {}", Shown(device),
          found.message()));
    }
    t.hardware.gpu = gpu->name;
    t.hardware.gpus = 1;
    if (!parts.count.empty()) {
      s = ParseNumber("measured: the GPU count", parts.count, 1e-3, 1024, "GPUs",
                      &t.hardware.gpus);
      if (!s.ok()) return s;
    }
  }
  *out = t;
  return Status::OK();
}

Status PredictInUnit(const Catalog& catalog, const Workload& workload,
                     const ThroughputMeasurement& measurement, double* predicted) {
  UnitKind kind;
  if (!ParseUnit(measurement.unit, &kind)) {
    return Status::InvalidArgument(fmt::format("measured: unit '{}' is not one of {}",
                                               measurement.unit, kAllowedUnits));
  }
  Hardware hw;
  Status s = ResolveHardware(catalog, measurement.hardware, &hw);
  if (!s.ok()) return Status::InvalidArgument("measured: " + s.message());
  Estimate e;
  s = EstimateWorkload(catalog, workload, hw, &e);
  if (!s.ok()) return Status::InvalidArgument("measured: on that hardware: " + s.message());
  return ConvertPrediction(workload, e, kind, predicted);
}

Status SolveSpeedScale(const std::function<Status(double scale, double* value)>& predict,
                       double target, bool increasing, ScaleSearch* out) {
  *out = ScaleSearch();
  auto below_target = [&](double value) { return increasing ? value < target : value > target; };
  double low = std::log(1e-3), high = std::log(1e3);
  double at_low = 0, at_high = 0;
  Status s = predict(1.0, &out->at_one);
  if (s.ok()) s = predict(std::exp(low), &at_low);
  if (s.ok()) s = predict(std::exp(high), &at_high);
  if (!s.ok()) return s;
  out->lowest = std::min(at_low, at_high);
  out->highest = std::max(at_low, at_high);
  if (!below_target(at_low) || below_target(at_high)) return Status::OK();
  // 40 halvings of a range of e^13.8 leave the scale known to a part in 10^11.
  for (int i = 0; i < 40; ++i) {
    double mid = 0.5 * (low + high);
    double value = 0;
    if (!(s = predict(std::exp(mid), &value)).ok()) return s;
    if (below_target(value)) low = mid;
    else high = mid;
  }
  out->found = true;
  out->scale = std::exp(0.5 * (low + high));
  return Status::OK();
}

Status CalibrateFromThroughput(const Catalog& catalog, const ThroughputMeasurement& measurement,
                               Workload* workload, CalibrationOutcome* outcome) {
  UnitKind kind;
  if (!ParseUnit(measurement.unit, &kind)) {
    return Status::InvalidArgument(fmt::format("measured: unit '{}' is not one of {}",
                                               measurement.unit, kAllowedUnits));
  }
  Workload trial = *workload;
  const RateScale base = workload->calibration.all;
  auto predict = [&](double scale, double* value) {
    trial.calibration.all = {base.compute * scale, base.bandwidth * scale};
    return PredictInUnit(catalog, trial, measurement, value);
  };
  ScaleSearch search;
  Status s = SolveSpeedScale(predict, measurement.value, Increasing(kind), &search);
  if (!s.ok()) return s;
  if (!search.found) {
    return Status::InvalidArgument(fmt::format(
        "measured: {} {} cannot be reproduced on {}: the model predicts {:.4g} {} now and "
        "between {:.4g} and {:.4g} whatever the device speed (the time is bound by "
        "communication, the input pipeline, or does not depend on compute)",
        measurement.value, measurement.unit, measurement.text, search.at_one, measurement.unit,
        search.lowest, search.highest));
  }
  double after = 0;
  if (!(s = predict(search.scale, &after)).ok()) return s;
  workload->calibration.all = trial.calibration.all;
  std::string basis = fmt::format("{} measured (model: {:.3g} {}), speed scale {:.3g} for every device",
                                  measurement.text, search.at_one, measurement.unit, search.scale);
  // Checked against the public data (calibrate report): a serving measurement's deviation
  // belongs to its GPU and engine build, and transferring it to other GPUs raised their error.
  if (!workload->is_training()) {
    basis += "; for inference this transfers poorly to other GPU models, so trust it on the "
             "measured one";
  }
  workload->calibration.basis.push_back(basis);
  if (outcome != nullptr) *outcome = {search.scale, search.at_one, after};
  return Status::OK();
}

namespace {

const nlohmann::json* Field(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

double NumberOr(const nlohmann::json& object, const char* key, double fallback) {
  const nlohmann::json* v = Field(object, key);
  return v != nullptr && v->is_number() ? v->get<double>() : fallback;
}

std::string GemmPrecisionFor(NumericFormat format) {
  switch (format) {
    case NumericFormat::kFp32: return "fp32";
    case NumericFormat::kTf32: return "tf32";
    case NumericFormat::kFp16: return "fp16";
    case NumericFormat::kFp8: return "fp8";
    default: return "bf16";  // bf16, and int8/int4 kernels that run 16-bit tensor-core math
  }
}

// Scales within this range are believable; outside, the probe or the catalog is wrong.
Status CheckScale(double scale, const std::string& what) {
  if (!(scale > 0.02 && scale < 5) || !std::isfinite(scale)) {
    return Status::InvalidArgument(fmt::format(
        "calibration: {} gives a speed scale of {:.3g}, outside 0.02 to 5; the probe does not "
        "look like a measurement of this device",
        what, scale));
  }
  return Status::OK();
}

}  // namespace

Status CalibrateFromProbe(const Catalog& catalog, const nlohmann::json& probe, Workload* w) {
  const nlohmann::json* schema = Field(probe, "schema");
  if (schema == nullptr || *schema != "cloudfit.probe/v1") {
    return Status::InvalidArgument(
        "calibration: schema: expected \"cloudfit.probe/v1\" (the output of 'cloudfit probe "
        "--json' or --out)");
  }
  const EfficiencyTable& eff = catalog.efficiency();
  // What each benchmark reaches of the datasheet peak on a typical healthy machine; a probe
  // above or below that says this machine is faster or slower than the catalog assumes.
  const double gemm_typical = eff.Lookup("probe_gemm_fraction", "*", "gpu", 0.8);
  const double copy_typical = eff.Lookup("probe_copy_fraction", "*", "gpu", 0.9);
  const double cpu_gemm_typical = eff.Lookup("probe_gemm_fraction", "*", "cpu", 0.85);
  const double triad_typical = eff.Lookup("probe_copy_fraction", "*", "cpu", 0.75);
  int applied = 0;

  const nlohmann::json* gpu = Field(probe, "gpu");
  const nlohmann::json* devices = gpu != nullptr ? Field(*gpu, "devices") : nullptr;
  if (devices != nullptr && devices->is_array()) {
    std::string want = GemmPrecisionFor(w->precision);
    for (size_t i = 0; i < devices->size(); ++i) {
      const nlohmann::json& d = (*devices)[i];
      const nlohmann::json* name = Field(d, "catalog_name");
      if (name == nullptr || !name->is_string()) continue;  // not in the catalog: no peaks
      const Accelerator* acc = nullptr;
      if (!catalog.FindAccelerator(name->get<std::string>(), &acc).ok()) {
        return Status::InvalidArgument(fmt::format(
            "calibration: gpu.devices[{}].catalog_name: unknown GPU '{}'", i, name->get<std::string>()));
      }
      if (w->calibration.by_device.count(acc->name) > 0) continue;  // one device per model
      RateScale scale;
      std::string basis;
      const nlohmann::json* gemms = Field(d, "gemm");
      Precision p = Precision::kBf16;
      ParsePrecision(want, &p);
      if (gemms != nullptr && gemms->is_array() && acc->peak(p)) {
        for (const nlohmann::json& g : *gemms) {
          const nlohmann::json* precision = Field(g, "precision");
          double rate = NumberOr(g, "flops_per_s", 0);
          if (precision == nullptr || *precision != want || !(rate > 0)) continue;
          double fraction = rate / *acc->peak(p);
          scale.compute = fraction / gemm_typical;
          basis += fmt::format("{} GEMM {:.0f} TFLOP/s = {:.0f}% of peak (typical {:.0f}%)",
                               want, rate / 1e12, 100 * fraction, 100 * gemm_typical);
        }
      }
      double copy = NumberOr(d, "device_copy_bytes_per_s", 0);
      if (copy > 0 && acc->memory_bandwidth_bytes_per_s > 0) {
        double fraction = copy / acc->memory_bandwidth_bytes_per_s;
        scale.bandwidth = fraction / copy_typical;
        basis += fmt::format("{}copy {:.2f} TB/s = {:.0f}% of peak (typical {:.0f}%)",
                             basis.empty() ? "" : ", ", copy / 1e12, 100 * fraction,
                             100 * copy_typical);
      }
      if (basis.empty()) continue;
      Status s = CheckScale(scale.compute, fmt::format("gpu.devices[{}].gemm", i));
      if (s.ok()) s = CheckScale(scale.bandwidth, fmt::format("gpu.devices[{}].device_copy", i));
      if (!s.ok()) return s;
      w->calibration.by_device[acc->name] = scale;
      w->calibration.basis.push_back(fmt::format("a probe of {}: {}", acc->name, basis));
      ++applied;
    }
  }

  const nlohmann::json* cpu = Field(probe, "cpu");
  const nlohmann::json* generation = cpu != nullptr ? Field(*cpu, "catalog_generation") : nullptr;
  if (generation != nullptr && generation->is_string()) {
    const CpuGeneration* gen = catalog.FindCpu(generation->get<std::string>());
    if (gen == nullptr) {
      return Status::InvalidArgument(fmt::format(
          "calibration: cpu.catalog_generation: unknown CPU generation '{}'",
          generation->get<std::string>()));
    }
    RateScale scale;
    std::string basis;
    const nlohmann::json* gemm = Field(*cpu, "gemm_fp32");
    if (gemm != nullptr) {
      double rate = NumberOr(*gemm, "flops_per_s", 0);
      double threads = NumberOr(*gemm, "threads", 0);
      const nlohmann::json* library = Field(*gemm, "library");
      bool tuned = library != nullptr && library->is_string() &&
                   library->get<std::string>().find("built-in") == std::string::npos;
      // The built-in kernel measures the kernel, not the CPU: only a tuned BLAS calibrates.
      if (rate > 0 && threads > 0 && tuned) {
        double per_thread =
            Fp32PeakPerThread(*gen, static_cast<int>(NumberOr(*cpu, "logical_cpus", 0)),
                              static_cast<int>(NumberOr(*cpu, "physical_cores", 0)));
        double fraction = rate / (threads * per_thread);
        scale.compute = fraction / cpu_gemm_typical;
        basis = fmt::format("FP32 GEMM {:.0f} GFLOP/s on {:.0f} threads = {:.0f}% of peak "
                            "(typical {:.0f}%)",
                            rate / 1e9, threads, 100 * fraction, 100 * cpu_gemm_typical);
      }
    }
    const nlohmann::json* triad = Field(*cpu, "memory_triad");
    double sockets = std::max(1.0, NumberOr(*cpu, "sockets", 1));
    double usable = NumberOr(*cpu, "usable_cpus", 0);
    double socket_threads = gen->cores_per_socket * std::max(1, gen->threads_per_core);
    // A VM's triad reflects its share of the socket; only a whole socket says something about
    // the memory system itself.
    if (triad != nullptr && gen->memory_bandwidth_bytes_per_s_per_socket > 0 &&
        socket_threads > 0 && usable >= socket_threads * sockets) {
      double fraction = NumberOr(*triad, "bytes_per_s", 0) /
                        (gen->memory_bandwidth_bytes_per_s_per_socket * sockets);
      if (fraction > 0) {
        scale.bandwidth = fraction / triad_typical;
        basis += fmt::format("{}triad {:.0f}% of peak (typical {:.0f}%)",
                             basis.empty() ? "" : ", ", 100 * fraction, 100 * triad_typical);
      }
    }
    if (!basis.empty()) {
      Status s = CheckScale(scale.compute, "cpu.gemm_fp32");
      if (s.ok()) s = CheckScale(scale.bandwidth, "cpu.memory_triad");
      if (!s.ok()) return s;
      w->calibration.by_device[gen->name] = scale;
      w->calibration.basis.push_back(fmt::format("a probe of {}: {}", gen->name, basis));
      ++applied;
    }
  }
  if (applied == 0) {
    return Status::InvalidArgument(
        "calibration: the probe holds no device found in the catalog with a measured rate "
        "(gpu.devices[].catalog_name with gemm or device_copy_bytes_per_s, or "
        "cpu.catalog_generation with gemm_fp32 from a tuned BLAS)");
  }
  return Status::OK();
}

}  // namespace cloudfit

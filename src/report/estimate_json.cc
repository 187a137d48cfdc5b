#include "cloudfit/estimate_json.h"

namespace cloudfit {

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

nlohmann::json OptionalSeconds(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json AssumptionsToJson(const Workload& w) {
  nlohmann::json list = nlohmann::json::array();
  for (const Assumption& a : w.assumptions) {
    list.push_back({{"field", a.field}, {"value", a.value}, {"why", a.why}});
  }
  return list;
}

// Each breakdown in GiB per device.
nlohmann::json MemoryToJson(const MemoryBreakdown& m) {
  return {{"weights_gib", m.weights_bytes / kGiB},
          {"gradients_gib", m.gradients_bytes / kGiB},
          {"optimizer_gib", m.optimizer_bytes / kGiB},
          {"activations_gib", m.activations_bytes / kGiB},
          {"kv_cache_gib", m.kv_cache_bytes / kGiB},
          {"comm_buffers_gib", m.comm_buffers_bytes / kGiB},
          {"runtime_gib", m.runtime_bytes / kGiB},
          {"total_gib", m.total_bytes() / kGiB},
          {"capacity_gib", m.capacity_bytes / kGiB},
          {"host_gib", m.host_bytes / kGiB}};
}

nlohmann::json TimeToJson(const TimeBreakdown& t) {
  return {{"forward_s", t.forward_s}, {"backward_s", t.backward_s},
          {"compute_s", t.compute_s}, {"memory_s", t.memory_s},
          {"launch_s", t.launch_s},   {"communication_s", t.communication_s},
          {"bubble_s", t.bubble_s},   {"optimizer_s", t.optimizer_s},
          {"input_s", t.input_s},     {"step_s", t.step_s}};
}

nlohmann::json EstimateToJson(const Workload& w, const Estimate& e) {
  nlohmann::json terms = nlohmann::json::array();
  for (const Term& term : e.terms) {
    terms.push_back({{"name", term.name},
                     {"value", term.value},
                     {"unit", term.unit},
                     {"formula", term.formula}});
  }
  nlohmann::json out = {{"schema", "cloudfit.estimate/v1"},
                        {"workload",
                         {{"kind", WorkloadKindName(w.kind)},
                          {"model", w.model.name},
                          {"params", w.model.params},
                          {"precision", NumericFormatName(w.precision)},
                          {"seq_len", w.seq_len}}},
                        {"hardware", e.hardware},
                        {"runs_on_gpu", e.runs_on_gpu},
                        {"fits", e.fits},
                        {"bottleneck", e.bottleneck},
                        {"layout",
                         {{"data_parallel", e.layout.data_parallel},
                          {"zero_stage", e.layout.zero_stage},
                          {"tensor_parallel", e.layout.tensor_parallel},
                          {"pipeline_parallel", e.layout.pipeline_parallel},
                          {"micro_batch", e.layout.micro_batch},
                          {"global_batch", e.layout.global_batch},
                          {"grad_accumulation", e.layout.grad_accumulation}}},
                        {"memory", MemoryToJson(e.memory)},
                        {"time", TimeToJson(e.time)},
                        {"throughput", e.throughput},
                        {"throughput_unit", e.throughput_unit},
                        {"total_hours", e.total_s / 3600},
                        {"scaling_efficiency", e.scaling_efficiency},
                        {"notes", e.notes},
                        {"terms", terms}};
  if (!w.assumptions.empty()) out["assumptions"] = AssumptionsToJson(w);
  if (w.calibration.active()) out["calibrated_from"] = w.calibration.basis;
  if (e.calibration_scale) {
    out["calibration_scale"] = {{"compute", e.calibration_scale->compute},
                                {"bandwidth", e.calibration_scale->bandwidth}};
  }
  if (e.serving) {
    const ServingFigures& s = *e.serving;
    out["serving"] = {{"engine", s.engine},
                      {"copies", s.copies},
                      {"tensor_parallel", s.tensor_parallel},
                      {"pipeline_parallel", s.pipeline_parallel},
                      {"percentile", s.percentile},
                      {"prefill_s", s.prefill_s},
                      {"ttft_s", s.ttft_s},
                      {"tpot_s", s.tpot_s},
                      {"ttft_median_s", s.ttft_median_s},
                      {"tpot_median_s", s.tpot_median_s},
                      {"max_batch", s.max_batch},
                      {"batch_at_load", s.batch_at_load},
                      {"kv_capacity_tokens", s.kv_capacity_tokens},
                      {"tokens_per_s", s.tokens_per_s},
                      {"requests_per_s", s.requests_per_s},
                      {"saturation_requests_per_s", s.saturation_requests_per_s},
                      {"utilisation", s.utilisation},
                      {"sized_by", s.sized_by},
                      {"replicas", s.replicas},
                      {"meets_targets", s.meets_targets},
                      {"ttft_target_s", OptionalSeconds(w.ttft_target_s)},
                      {"tpot_target_s", OptionalSeconds(w.tpot_target_s)}};
  }
  if (e.render) {
    const RenderFigures& r = *e.render;
    out["render"] = {{"seconds_per_frame", r.seconds_per_frame},
                     {"frames_per_hour", r.frames_per_hour},
                     {"streams_per_gpu", r.streams_per_gpu},
                     {"av1_available", r.av1_available}};
  }
  return out;
}

}  // namespace cloudfit

#include "cloudfit/estimate_json.h"

#include "report/json_parts.h"

namespace cloudfit {

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

}  // namespace

// Members are written in ascending order of their names, as a JSON document (std::map) keeps
// them: the text is the same as the document's dump().

void WriteAssumptions(const Workload& w, JsonWriter* out) {
  out->BeginArray();
  for (const Assumption& a : w.assumptions) {
    out->BeginObject();
    out->Field("field", a.field);
    out->Field("value", a.value);
    out->Field("why", a.why);
    out->EndObject();
  }
  out->EndArray();
}

void WriteMemory(const MemoryBreakdown& m, JsonWriter* out) {
  out->BeginObject();
  out->Field("activations_gib", m.activations_bytes / kGiB);
  out->Field("capacity_gib", m.capacity_bytes / kGiB);
  out->Field("comm_buffers_gib", m.comm_buffers_bytes / kGiB);
  out->Field("gradients_gib", m.gradients_bytes / kGiB);
  out->Field("host_gib", m.host_bytes / kGiB);
  out->Field("kv_cache_gib", m.kv_cache_bytes / kGiB);
  out->Field("optimizer_gib", m.optimizer_bytes / kGiB);
  out->Field("runtime_gib", m.runtime_bytes / kGiB);
  out->Field("total_gib", m.total_bytes() / kGiB);
  out->Field("weights_gib", m.weights_bytes / kGiB);
  out->EndObject();
}

void WriteTime(const TimeBreakdown& t, JsonWriter* out) {
  out->BeginObject();
  out->Field("backward_s", t.backward_s);
  out->Field("bubble_s", t.bubble_s);
  out->Field("communication_s", t.communication_s);
  out->Field("compute_s", t.compute_s);
  out->Field("forward_s", t.forward_s);
  out->Field("input_s", t.input_s);
  out->Field("launch_s", t.launch_s);
  out->Field("memory_s", t.memory_s);
  out->Field("optimizer_s", t.optimizer_s);
  out->Field("step_s", t.step_s);
  out->EndObject();
}

namespace {

void WriteServing(const Workload& w, const ServingFigures& s, JsonWriter* out) {
  out->BeginObject();
  out->Field("batch_at_load", s.batch_at_load);
  out->Field("copies", s.copies);
  out->Field("engine", s.engine);
  out->Field("kv_capacity_tokens", s.kv_capacity_tokens);
  out->Field("max_batch", s.max_batch);
  out->Field("meets_targets", s.meets_targets);
  out->Field("percentile", s.percentile);
  out->Field("pipeline_parallel", s.pipeline_parallel);
  out->Field("prefill_s", s.prefill_s);
  out->Field("replicas", s.replicas);
  out->Field("requests_per_s", s.requests_per_s);
  out->Field("saturation_requests_per_s", s.saturation_requests_per_s);
  out->Field("sized_by", s.sized_by);
  out->Field("tensor_parallel", s.tensor_parallel);
  out->Field("tokens_per_s", s.tokens_per_s);
  out->Field("tpot_median_s", s.tpot_median_s);
  out->Field("tpot_s", s.tpot_s);
  out->Field("tpot_target_s", w.tpot_target_s);
  out->Field("ttft_median_s", s.ttft_median_s);
  out->Field("ttft_s", s.ttft_s);
  out->Field("ttft_target_s", w.ttft_target_s);
  out->Field("utilisation", s.utilisation);
  out->EndObject();
}

}  // namespace

void WriteEstimate(const Workload& w, const Estimate& e, JsonWriter* out) {
  out->BeginObject();
  if (!w.assumptions.empty()) {
    out->Key("assumptions");
    WriteAssumptions(w, out);
  }
  out->Field("bottleneck", e.bottleneck);
  if (w.calibration.active()) out->Field("calibrated_from", w.calibration.basis);
  if (e.calibration_scale) {
    out->Key("calibration_scale");
    out->BeginObject();
    out->Field("bandwidth", e.calibration_scale->bandwidth);
    out->Field("compute", e.calibration_scale->compute);
    out->EndObject();
  }
  out->Field("fits", e.fits);
  out->Field("hardware", e.hardware);
  out->Key("layout");
  out->BeginObject();
  out->Field("data_parallel", e.layout.data_parallel);
  out->Field("global_batch", e.layout.global_batch);
  out->Field("grad_accumulation", e.layout.grad_accumulation);
  out->Field("micro_batch", e.layout.micro_batch);
  out->Field("pipeline_parallel", e.layout.pipeline_parallel);
  out->Field("tensor_parallel", e.layout.tensor_parallel);
  out->Field("zero_stage", e.layout.zero_stage);
  out->EndObject();
  out->Key("memory");
  WriteMemory(e.memory, out);
  out->Field("notes", e.notes);
  if (e.render) {
    const RenderFigures& r = *e.render;
    out->Key("render");
    out->BeginObject();
    out->Field("av1_available", r.av1_available);
    out->Field("frames_per_hour", r.frames_per_hour);
    out->Field("seconds_per_frame", r.seconds_per_frame);
    out->Field("streams_per_gpu", r.streams_per_gpu);
    out->EndObject();
  }
  out->Field("runs_on_gpu", e.runs_on_gpu);
  out->Field("scaling_efficiency", e.scaling_efficiency);
  out->Field("schema", "cloudfit.estimate/v1");
  if (e.serving) {
    out->Key("serving");
    WriteServing(w, *e.serving, out);
  }
  out->Key("terms");
  out->BeginArray();
  for (const Term& term : e.terms) {
    out->BeginObject();
    out->Field("formula", term.formula);
    out->Field("name", term.name);
    out->Field("unit", term.unit);
    out->Field("value", term.value);
    out->EndObject();
  }
  out->EndArray();
  out->Field("throughput", e.throughput);
  out->Field("throughput_unit", e.throughput_unit);
  out->Key("time");
  WriteTime(e.time, out);
  out->Field("total_hours", e.total_s / 3600);
  out->Key("workload");
  out->BeginObject();
  out->Field("kind", WorkloadKindName(w.kind));
  out->Field("model", w.model.name);
  out->Field("params", w.model.params);
  out->Field("precision", NumericFormatName(w.precision));
  out->Field("seq_len", w.seq_len);
  out->EndObject();
  out->EndObject();
}

nlohmann::json ParseWritten(const std::string& text) { return nlohmann::json::parse(text); }

nlohmann::json AssumptionsToJson(const Workload& w) {
  std::string text;
  JsonWriter out(&text);
  WriteAssumptions(w, &out);
  return ParseWritten(text);
}

std::string EstimateJsonText(const Workload& w, const Estimate& e, int indent) {
  std::string text;
  JsonWriter out(&text, indent);
  WriteEstimate(w, e, &out);
  return text;
}

nlohmann::json EstimateToJson(const Workload& w, const Estimate& e) {
  return ParseWritten(EstimateJsonText(w, e));
}

}  // namespace cloudfit

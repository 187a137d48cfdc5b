// data/operators.csv: the forward operators of zoo models that their transformer shape does not
// describe, one row per operator (or group of identical ones), attached to the models.
#include <fmt/format.h>

#include <cmath>
#include <map>

#include "catalog/loaders.h"
#include "util/strings.h"
#include "util/validate.h"

namespace cloudfit {

namespace {

// How far a model's operators may stray from its published FLOPs: the published figures round
// to three digits and leave out small terms (biases, normalisation arithmetic).
constexpr double kFlopsTolerance = 0.05;

double Whole(CsvRowReader* r, std::string_view column, double min) {
  std::string_view text = r->Text(column);
  if (text.empty()) return min;
  double v = r->Number(column, min, 1e9);
  if (r->status().ok() && v != std::floor(v)) r->Fail(column, "not a whole number");
  return v;
}

}  // namespace

Status ParseOperators(const CsvTable& table, std::vector<Model>* models) {
  Status s = table.RequireColumns({"model", "op", "kind", "source"});
  if (!s.ok()) return s;
  std::map<std::string, Model*> by_name;
  for (Model& m : *models) by_name[m.name] = &m;
  std::map<Model*, int> first_line;
  for (const CsvRow& row : table.rows) {
    CsvRowReader r(table, row);
    std::string model = r.RequiredText("model");
    auto it = by_name.find(model);
    if (r.status().ok() && it == by_name.end()) {
      r.Fail("model", fmt::format("'{}' is not a model of models.csv", Shown(model)));
    }
    Operator op;
    op.label = r.RequiredText("op");
    std::string kind = r.RequiredText("kind");
    if (r.status().ok() && !ParseOpKind(kind, &op.kind)) {
      r.Fail("kind", fmt::format("'{}' is not one of gemm, conv, gemm_sequential, attention, "
                                 "fused_attention, depthwise, norm, activation, elementwise, "
                                 "softmax, pooling, resize, embedding, loss, lstm_cell",
                                 Shown(kind)));
    }
    op.spatial = r.YesNo("spatial");
    op.in_place = r.YesNo("in_place", false);
    op.freed = r.YesNo("freed", false);
    if (op.in_place && op.freed) {
      r.Fail("freed", "a row written in place has no output of its own to free: leave freed empty");
    }
    std::string when = ToLower(r.Text("when"));
    if (when == "training")
      op.when = OpWhen::kTraining;
    else if (when == "unfused-attention")
      op.when = OpWhen::kUnfusedAttention;
    else if (!when.empty() && r.status().ok()) {
      r.Fail("when", fmt::format("'{}' is not training or unfused-attention (or empty: always)",
                                 Shown(when)));
    }
    op.repeats = Whole(&r, "repeats", 1);
    op.groups = Whole(&r, "groups", 1);
    op.m = r.OptionalNumber("m", 0, 1e12).value_or(0);
    op.n = r.OptionalNumber("n", 0, 1e12).value_or(0);
    op.k = r.OptionalNumber("k", 0, 1e12).value_or(0);
    op.read_elements = r.OptionalNumber("read_elements", 0, 1e15).value_or(0);
    op.written_elements = r.OptionalNumber("written_elements", 0, 1e15).value_or(0);
    op.saved_index_bytes = r.OptionalNumber("saved_index_bytes", 0, 8).value_or(0);
    op.source = r.RequiredText("source");
    if (r.status().ok() && (IsMatrixKind(op.kind) || op.kind == OpKind::kDepthwise) &&
        (op.m <= 0 || op.n <= 0 || op.k <= 0)) {
      r.Fail(op.m <= 0 ? "m" : op.n <= 0 ? "n" : "k", "a matrix operator needs m, n and k above 0");
    }
    if (r.status().ok() && !IsMatrixKind(op.kind) && op.kind != OpKind::kDepthwise &&
        op.kind != OpKind::kView && op.read_elements + op.written_elements <= 0) {
      r.Fail("read_elements", "a memory-bound operator needs the elements it reads or writes");
    }
    if (!r.status().ok()) return r.status();
    it->second->operators.push_back(std::move(op));
    first_line.emplace(it->second, row.line);
  }
  for (const auto& [model, line] : first_line) {
    if (!model->gflops_per_sample) continue;
    double flops = 0;
    for (const Operator& op : model->operators) flops += op.flops();
    double published = *model->gflops_per_sample * 1e9;
    if (std::abs(flops - published) > kFlopsTolerance * published) {
      return Status::Corruption(fmt::format(
          "{}:{}: field 'm': the operators of '{}' add up to {:.4g} GFLOPs per sample, but "
          "models.csv gives gflops_per_sample {:.4g} (allowed: within {:.0f}%)",
          table.path, line, model->name, flops / 1e9, published / 1e9, 100 * kFlopsTolerance));
    }
  }
  return Status::OK();
}

}  // namespace cloudfit

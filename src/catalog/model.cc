#include <fmt/format.h>

#include "catalog/loaders.h"
#include "util/strings.h"
#include "util/validate.h"

namespace cloudfit {

namespace {
const char* const kFamilies[] = {"decoder", "encoder", "encoder-decoder", "moe",
                                 "cnn",     "vit",     "diffusion",       "speech"};
}

Status ParseModels(const CsvTable& table, std::vector<Model>* out) {
  Status s = table.RequireColumns({"name", "aliases", "family", "params_b", "source", "as_of"});
  if (!s.ok()) return s;
  for (const CsvRow& row : table.rows) {
    CsvRowReader r(table, row);
    Model m;
    m.name = r.RequiredName("name");
    m.aliases = SplitList(r.Text("aliases"), '|');
    m.family = r.RequiredText("family");
    bool known_family = false;
    for (const char* family : kFamilies) known_family |= m.family == family;
    if (r.status().ok() && !known_family) {
      r.Fail("family",
             fmt::format("'{}' is not one of decoder, encoder, encoder-decoder, moe, cnn, vit, "
                         "diffusion, speech",
                         Shown(m.family)));
    }
    m.params = r.Number("params_b", 1e-6, 1e5) * 1e9;
    m.active_params = r.OptionalNumber("active_params_b", 1e-6, 1e5).value_or(m.params / 1e9) * 1e9;
    if (r.status().ok() && m.active_params > m.params * 1.0001) {
      r.Fail("active_params_b", "more active parameters than parameters");
    }
    auto count = [&](std::string_view column) {
      return static_cast<int>(r.OptionalNumber(column, 0, 1e7).value_or(0));
    };
    m.layers = count("layers");
    m.hidden = count("hidden");
    m.heads = count("heads");
    m.kv_heads = count("kv_heads");
    if (m.kv_heads == 0) m.kv_heads = m.heads;
    m.ffn_hidden = count("ffn_hidden");
    m.vocab = count("vocab");
    m.context = count("context");
    m.experts = count("experts");
    m.experts_per_token = count("experts_per_token");
    m.tied_embeddings = r.YesNo("tied_embeddings");
    m.gflops_per_sample = r.OptionalNumber("gflops_per_sample", 1e-6, 1e9);
    m.resolution = count("resolution");
    m.compute_class = r.Text("compute_class");
    m.source = r.RequiredText("source");
    m.as_of = r.RequiredText("as_of");
    m.notes = r.Text("notes");
    if (r.status().ok() && m.heads > 0 && m.kv_heads > m.heads) {
      r.Fail("kv_heads", "more key/value heads than attention heads");
    }
    if (!r.status().ok()) return r.status();
    out->push_back(std::move(m));
  }
  return Status::OK();
}

}  // namespace cloudfit

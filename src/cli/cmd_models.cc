// cloudfit models: the model zoo.
#include <iostream>
#include <memory>

#include "cli/cli_common.h"
#include "cloudfit/catalog_json.h"
#include "util/strings.h"

namespace cloudfit::cli {

namespace {

struct ModelsOptions {
  std::string name;
  std::string family;
  FormatOptions format;
};

TableCell Count(int value) {
  return value > 0 ? TableCell(std::to_string(value)) : TableCell::Unknown();
}

void Run(const GlobalOptions& global, const ModelsOptions& options) {
  const Catalog& catalog = LoadKeptCatalogOrThrow(global);
  std::vector<const Model*> rows;
  if (!options.name.empty()) {
    const Model* m = nullptr;
    ThrowIfError(catalog.FindModel(options.name, &m));
    rows.push_back(m);
  } else {
    for (const Model& m : catalog.models()) {
      if (options.family.empty() || ToLower(m.family) == ToLower(options.family))
        rows.push_back(&m);
    }
  }
  if (options.format.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const Model* m : rows) list.push_back(ModelToJson(*m));
    PrintJson({{"schema", "cloudfit.models/v1"}, {"count", rows.size()}, {"models", list}});
    return;
  }
  // Parameters in billions; context in tokens; GFLOP per sample for CNNs and diffusion.
  Table table({{"name", "name"},
               {"family", "family"},
               {"params_billions", "params B", true},
               {"active_params_billions", "active B", true, 2},
               {"layers", "layers", true, 3},
               {"hidden", "hidden", true, 5},
               {"heads", "heads", true, 6},
               {"kv_heads", "kv", true, 7},
               {"vocab", "vocab", true, 8},
               {"context_tokens", "context", true, 4},
               {"gflop_per_sample", "GFLOP/sample", true, 1}});
  for (const Model* m : rows) {
    table.AddRow({m->name, m->family, FormatNumber(m->params / 1e9, 3),
                  FormatNumber(m->active_params / 1e9, 3), Count(m->layers), Count(m->hidden),
                  Count(m->heads), Count(m->kv_heads), Count(m->vocab), Count(m->context),
                  m->gflops_per_sample ? TableCell(FormatNumber(*m->gflops_per_sample, 1))
                                       : TableCell::Unknown()});
  }
  PrintTable(table, options.format);
}

}  // namespace

void AddModelsCommand(CLI::App* app, const GlobalOptions* global) {
  auto options = std::make_shared<ModelsOptions>();
  CLI::App* c = app->add_subcommand("models", "List the model zoo, or show one model");
  c->add_option("name", options->name, "Show one model (any name or alias)");
  c->add_option("--family", options->family,
                "decoder, encoder, encoder-decoder, moe, cnn, vit, diffusion, speech")
      ->group(kGroupFilters);
  AddFormatFlags(c, &options->format);
  c->callback([global, options]() { Run(*global, *options); });
}

}  // namespace cloudfit::cli

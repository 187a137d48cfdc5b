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

std::string Count(int value) { return value > 0 ? std::to_string(value) : "-"; }

void Run(const GlobalOptions& global, const ModelsOptions& options) {
  Catalog catalog = LoadCatalogOrThrow(global);
  std::vector<const Model*> rows;
  if (!options.name.empty()) {
    const Model* m = nullptr;
    ThrowIfError(catalog.FindModel(options.name, &m));
    rows.push_back(m);
  } else {
    for (const Model& m : catalog.models()) {
      if (options.family.empty() || ToLower(m.family) == ToLower(options.family)) rows.push_back(&m);
    }
  }
  if (options.format.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const Model* m : rows) list.push_back(ModelToJson(*m));
    PrintJson({{"schema", "cloudfit.models/v1"}, {"count", rows.size()}, {"models", list}});
    return;
  }
  Table table({{"name", "name"},
               {"family", "family"},
               {"params_b", "params B", true},
               {"active_params_b", "active B", true},
               {"layers", "layers", true},
               {"hidden", "hidden", true},
               {"heads", "heads", true},
               {"kv_heads", "kv", true},
               {"vocab", "vocab", true},
               {"context", "context", true},
               {"gflops_per_sample", "GFLOP/sample", true}});
  for (const Model* m : rows) {
    table.AddRow({m->name, m->family, FormatNumber(m->params / 1e9, 3),
                  FormatNumber(m->active_params / 1e9, 3), Count(m->layers), Count(m->hidden),
                  Count(m->heads), Count(m->kv_heads), Count(m->vocab), Count(m->context),
                  m->gflops_per_sample ? FormatNumber(*m->gflops_per_sample, 1) : "-"});
  }
  std::cout << table.Render(options.format.format());
}

}  // namespace

void AddModelsCommand(CLI::App* app, const GlobalOptions* global) {
  auto options = std::make_shared<ModelsOptions>();
  CLI::App* c = app->add_subcommand("models", "List the model zoo, or show one model");
  c->add_option("name", options->name, "Show one model (any name or alias)");
  c->add_option("--family", options->family,
                "decoder, encoder, encoder-decoder, moe, cnn, vit, diffusion, speech");
  AddFormatFlags(c, &options->format);
  c->callback([global, options]() { Run(*global, *options); });
}

}  // namespace cloudfit::cli

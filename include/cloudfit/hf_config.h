// Reading a Hugging Face config.json into a Model.
//
// A config.json states a model's shape (layers, widths, heads, vocabulary) but not its parameter
// count, so params and active_params are computed here from the architecture each model_type
// names: embeddings, attention, MLP (gated or plain, dense or mixture-of-experts), biases and
// norms, counted the way the transformers implementation builds them. For the models the tests
// cover, the count lands within 2% of what the publisher states, usually far closer.
//
// Supported model_types: llama, mistral, mixtral, qwen2, qwen2_moe, gemma, gemma2, phi3, gpt2,
// bert, roberta, t5, mt5. Any other is an InvalidArgument that names the ones supported; a
// missing, null-where-required or non-positive integer field is an InvalidArgument naming it.
// Keys a model_type does not need are ignored, and optional keys take the transformers default.
//
// Conventions, matching data/models.csv: layers is per stack for T5 (encoder and decoder each);
// ffn_hidden is per expert for mixture-of-experts; context is the position limit the config
// states (T5 has none and reports n_positions, 512 by default). No exception escapes.
#ifndef CLOUDFIT_HF_CONFIG_H_
#define CLOUDFIT_HF_CONFIG_H_

#include <string>

#include <nlohmann/json.hpp>

#include "cloudfit/model.h"
#include "cloudfit/status.h"

namespace cloudfit {

// Builds a Model from a parsed config.json; `name` becomes model.name and source is
// "config.json". On error *out is left untouched.
Status ModelFromHfConfig(const nlohmann::json& config, const std::string& name, Model* out);

// Reads and parses the file at `path`, then ModelFromHfConfig. The name is `_name_or_path` when
// the config has one; otherwise the parent directory's name for a file called config.json (the
// layout of a downloaded model), or else the file name without its extension. source is `path`.
// An unreadable file is an IOError, text that is not JSON a Corruption.
Status LoadHfConfigFile(const std::string& path, Model* out);

}  // namespace cloudfit

#endif  // CLOUDFIT_HF_CONFIG_H_

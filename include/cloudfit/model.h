// A model in the zoo: the architecture numbers the estimates need, with a source.
#ifndef CLOUDFIT_MODEL_H_
#define CLOUDFIT_MODEL_H_

#include <optional>
#include <string>
#include <vector>

#include "cloudfit/operators.h"
#include "cloudfit/shared_text.h"

namespace cloudfit {

struct Model {
  std::string name;
  std::vector<std::string> aliases;
  std::string family;        // decoder, encoder, encoder-decoder, moe, cnn, vit, diffusion, speech
  double params = 0;         // all parameters
  double active_params = 0;  // per token; equals params except for mixture-of-experts
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;
  int ffn_hidden = 0;
  int vocab = 0;
  int context = 0;
  int experts = 0;
  int experts_per_token = 0;
  bool tied_embeddings = false;
  std::optional<double> gflops_per_sample;  // forward pass, for CNNs and diffusion models
  int resolution = 0;                       // input side in pixels, for vision models
  // transformer, cnn, rnn, flow, recsys: how its compute behaves (efficiency lookups).
  // Empty: derived from the family.
  std::string compute_class;
  // The forward operators of models that the transformer shape does not describe (CNNs, RNNs,
  // diffusion U-Nets): rows of data/operators.csv, per sample at `resolution`.
  std::vector<Operator> operators;
  SharedText source;
  std::string as_of;
  SharedText notes;
};

}  // namespace cloudfit

#endif  // CLOUDFIT_MODEL_H_
